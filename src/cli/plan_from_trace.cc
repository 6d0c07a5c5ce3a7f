// `gpudoctor plan --from-trace`: the prediction for the configuration the traces show, beside the
// measured run.
#include <algorithm>
#include <cstdio>

#include "analysis/job_profile.h"
#include "analysis/run_analysis.h"
#include "cli/commands.h"
#include "cli/plan_args.h"
#include "planning/trace_fit.h"
#include "report/plan_report.h"
#include "report/text.h"
#include "sources/trace_set.h"

namespace gpudoctor::cli {

namespace {

// What the job profile tells of the configuration the planner models.
TracedJob tracedJob(const JobProfile& p, int world) {
  TracedJob j;
  j.world = world;
  j.data_parallel = p.data_parallel;
  j.accumulation = p.grad_accumulation_steps;
  j.checkpointing = p.activation_checkpointing;
  j.autocast = p.autocast;
  j.precision = p.precision;
  return j;
}

}  // namespace

int runPlanFromTrace(const PlanArgs& a, PlanInputs in) {
  if (!a.json.empty()) return fail("--json with --from-trace: the plan-versus-trace comparison is text only", kUsage);
  auto& [m, c, t, pins] = in;
  auto files = expandTracePaths(a.from_trace);
  if (!files.ok()) return fail(files.error().message);
  auto traces = readTraceSet(files.value());
  if (!traces.ok()) return fail(traces.error().message);
  // The job's size: the traces' world size where they record it (a run may profile a few ranks
  // only), else their count.
  int world = 0;
  for (const auto& tr : traces.value()) world = std::max(world, tr.world_size);
  if (world <= 0) world = static_cast<int>(traces.value().size());
  bool gpus_given = a.wasGiven("--gpus-per-node") || a.wasGiven("--nodes");
  if (gpus_given && world != c.gpus())  // a plan for another GPU count is not this job's
    return fail("--from-trace: the traces are of a " + std::to_string(world) + "-GPU job, the plan is for " +
                    std::to_string(c.gpus()) + " (--gpus-per-node x --nodes): give the job's GPU count",
                kUsage);
  if (!gpus_given) {
    c.gpus_per_node = world;
    c.nodes = 1;
    if (!a.wasGiven("--global-batch") && !a.wasGiven("--global-batch-tokens")) t.global_batch = 8 * int64_t{world};
  }
  auto run = analyzeRun(traces.value(), {});
  if (!run.ok()) return fail(run.error().message);
  GivenSettings given;
  given.pins = pins;
  given.global_batch = a.wasGiven("--global-batch") || a.wasGiven("--global-batch-tokens");
  given.gpus = gpus_given;
  given.precision = a.wasGiven("--precision");
  TraceFit fit = fitTrace(tracedJob(profileJob(run.value()), world), given, t.global_batch, c.gpus());
  if (fit.precision) t.precision = *fit.precision;
  auto plans = searchPlans(m, c, t, fit.pins);
  if (plans.empty())
    return fail(
        "--from-trace: no configuration of the planner matches the traced job with these settings (global batch " +
            std::to_string(t.global_batch) + " on " + std::to_string(c.gpus()) +
            " GPUs): give the job's --global-batch, --micro-batch or --zero",
        kUsage);
  // The first configuration matching the pins is the job's; what the pins leave open is the fastest.
  std::string out = fitLines(renderPlanVsTrace(m, c, t, plans.front(), run.value(), fit));
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kOk;
}

}  // namespace gpudoctor::cli
