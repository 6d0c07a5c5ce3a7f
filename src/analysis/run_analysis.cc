#include "analysis/run_analysis.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <optional>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/digest.h"
#include "analysis/fleet.h"

namespace gpudoctor {

namespace {

// A step longer than this is not a training step but a corrupt timestamp (10 minutes).
constexpr int64_t kAbsurdStepNs = 600'000'000'000;
// Fewer kernels than this in all of a rank's steps, or a mean step shorter than kTooShortStepNs, is
// too little to judge a training step by (a one-kernel trace is a 20 ns "step"): said in a note.
constexpr int64_t kTooFewKernels = 10;
constexpr int64_t kTooShortStepNs = 100'000;

// The job's ranks (the traces' world size) that no trace given here holds, as a note; "" for none.
std::string missingRanksNote(const RunAnalysis& run) {
  int world = 0;
  std::set<int> present;
  for (const auto& r : run.ranks) {
    world = std::max(world, r.trace->world_size);
    present.insert(r.trace->rank);
  }
  for (const auto& l : run.left_out) present.insert(l.rank);
  if (world <= 1) return "";
  std::vector<int> missing;
  for (int k = 0; k < world; ++k)
    if (!present.count(k)) missing.push_back(k);
  if (missing.empty()) return "";
  const size_t shown = std::min<size_t>(missing.size(), 8);
  return fmt::format(
      "{} of the job's {} ranks have no trace here (missing: {}{}); the figures are those of the ranks present",
      missing.size(), world, fmt::join(missing.begin(), missing.begin() + static_cast<std::ptrdiff_t>(shown), ", "),
      missing.size() > shown ? ", ..." : "");
}
}  // namespace

StragglerReport stragglerOfGroups(const FleetReport& f) {
  StragglerReport r;
  const FleetGroup* best = nullptr;
  const FleetGroup* worst_wait = nullptr;
  for (const auto& g : f.groups) {
    r.collectives += g.matched;
    if (g.members >= 2 && g.matched > 0) r.matched = true;
    if (g.straggler >= 0 && (!best || g.others_wait_ns > best->others_wait_ns)) best = &g;
    if (!worst_wait || g.wait_fraction > worst_wait->wait_fraction) worst_wait = &g;
  }
  double steps = 0;
  for (const auto& row : f.rows) {
    r.ranks.push_back(
        {row.rank, row.nccl_ns, std::llround(row.wait_ns * static_cast<double>(row.steps)), row.last_arrivals});
    steps += static_cast<double>(row.steps);
  }
  steps /= std::max<double>(1, static_cast<double>(f.rows.size()));
  if (!r.matched) {
    r.note =
        fmt::format("collectives in {} process groups, none seen on two members: nothing to match", f.groups.size());
  } else if (best) {
    r.straggler = best->straggler;
    r.straggler_share = best->cause_steps;
    r.share_of = "steps";
    r.others_wait_ns = std::llround(best->others_wait_ns * steps);
    r.note = fmt::format("process group {}{}: {}", best->name, best->desc.empty() ? "" : " (" + best->desc + ")",
                         best->note);
  } else {
    r.note = fmt::format("no consistent straggler in any of {} process groups (most waiting: group {}: {})",
                         f.groups.size(), worst_wait->name, worst_wait->note);
  }
  return r;
}

namespace {

Status analyzeRank(RankAnalysis& ra, const AnalysisOptions& opt) {
  ra.index = buildIndex(*ra.trace);
  if (!ra.index.has_gpu_work())
    return Error{ra.trace->path +
                 ": no GPU activity in this trace (no kernels, memcpy or memset); "
                 "was the profiler run with ProfilerActivity.CUDA?"};
  auto w = findSteps(*ra.trace, ra.index, opt.steps, &ra.coverage);
  if (!w.ok()) return w.error();
  ra.windows = std::move(w.value());
  std::vector<int64_t> lat;
  for (const auto& win : ra.windows) {
    ra.steps.push_back(measureStep(ra.index, win, &lat));
    accumulate(ra.total, ra.steps.back());
  }
  ra.total.window.begin_ns = ra.windows.front().begin_ns;
  ra.total.window.end_ns = ra.windows.back().end_ns;
  ra.total.launch_latency = DurationStats::of(lat);
  std::vector<RankWindows> me{{&ra.index, &ra.windows}};
  ra.kernels = summarizeKernels(me, opt.top_n);
  ra.collectives = summarizeCollectives(me);
  ra.job = profileRank(ra, &ra.checkpoint, &ra.autocast_casts);
  ra.host_work = hostOwnWork(*ra.trace, ra.windows);
  ra.moe = findMoeDispatch(*ra.trace, ra.index, ra.windows);
  ra.embedding = findEmbeddingGrads(*ra.trace, ra.index, ra.windows);
  return {};
}
}  // namespace

Result<RunAnalysis> analyzeRun(const std::vector<RankTrace>& traces, const AnalysisOptions& opt) {
  RunAnalysis run;
  run.ranks.resize(traces.size());
  for (size_t i = 0; i < traces.size(); ++i) run.ranks[i].trace = &traces[i];
  std::vector<Status> status(traces.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < traces.size();) {
      try {
        status[i] = analyzeRank(run.ranks[i], opt);
      } catch (const std::bad_alloc&) {
        status[i] = Error{traces[i].path + ": out of memory while analyzing"};
      }
    }
  };
  unsigned n = opt.threads ? opt.threads : std::max(1u, std::thread::hardware_concurrency());
  n = static_cast<unsigned>(std::min<size_t>(n, traces.size()));
  std::vector<std::thread> pool;
  for (unsigned k = 1; k < n; ++k) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  // A rank without GPU activity (a CPU-only process of the job, a rank whose profiler missed CUDA)
  // is reported and left out while the others have some; any other failure fails the run.
  size_t without_gpu = 0;
  for (size_t i = 0; i < traces.size(); ++i) {
    if (status[i].ok()) continue;
    if (run.ranks[i].index.has_gpu_work()) return Error{status[i].message()};
    ++without_gpu;
  }
  if (without_gpu == traces.size()) return Error{status.front().message()};
  if (without_gpu) {
    std::vector<RankAnalysis> kept;
    for (size_t i = 0; i < traces.size(); ++i) {
      if (status[i].ok()) {
        kept.push_back(std::move(run.ranks[i]));
        continue;
      }
      run.left_out.push_back({traces[i].path, traces[i].rank, "no GPU activity (no kernels, memcpy or memset)"});
      run.notes.push_back(
          fmt::format("rank {} ({}) left out: no GPU activity in its trace (no kernels, memcpy or "
                      "memset); the figures are those of the {}",
                      traces[i].rank, traces[i].path,
                      traces.size() - without_gpu == 1 ? std::string("other rank")
                                                       : fmt::format("other {} ranks", traces.size() - without_gpu)));
    }
    run.ranks = std::move(kept);
  }
  if (std::string note = missingRanksNote(run); !note.empty() && !opt.chosen_ranks)
    run.notes.push_back(std::move(note));
  for (const auto& r : run.ranks) {
    const RankTrace& t = *r.trace;
    const std::string dev = t.devices.empty() ? "" : " (" + t.devices.front().name + ")";
    if (t.platform == "rocm")
      run.notes.push_back(
          fmt::format("rank {}: a ROCm (HIP) trace{}: HIP calls are read as their CUDA counterparts; "
                      "kernel classes, ceilings and the what-if's profiler costs are CUDA's, not "
                      "verified on AMD GPUs",
                      t.rank, dev));
    else if (t.platform == "mtia")
      run.notes.push_back(
          fmt::format("rank {}: an MTIA trace{}: unsupported; its figures use CUDA's names and may "
                      "miss work",
                      t.rank, dev));
    for (const auto& d : r.coverage.dropped)
      run.notes.push_back(
          fmt::format("rank {}: ProfilerStep#{} left out: it launches and runs no GPU work ({:.3f} ms "
                      "of host time only; e.g. the step the last prof.step() opens)",
                      r.trace->rank, d.number, static_cast<double>(d.host_ns) / 1e6));
    int64_t kernels = 0, wall = 0;
    for (const auto& st : r.steps) kernels += st.kernels, wall += st.wall_ns;
    if (!r.steps.empty() && (kernels < kTooFewKernels || wall / static_cast<int64_t>(r.steps.size()) < kTooShortStepNs))
      run.notes.push_back(
          fmt::format("{}: its {} step(s) hold {} kernel(s) in {:.3f} ms: too little to judge a training step by; "
                      "trace 3 or more whole steps (torch.profiler schedule active=3)",
                      r.trace->rank >= 0 ? fmt::format("rank {}", r.trace->rank) : std::string("the trace"),
                      r.steps.size(), kernels, static_cast<double>(wall) / 1e6));
    for (const auto& st : r.steps)  // no training step lasts 10 minutes: a timestamp that is not one
      if (st.wall_ns > kAbsurdStepNs)
        run.notes.push_back(
            fmt::format("rank {}: step {} lasts {:.0f} s: a timestamp in the trace is likely corrupt (a clock "
                        "jump or a damaged event); its figures are kept but are not to be trusted",
                        r.trace->rank, st.window.number, static_cast<double>(st.wall_ns) / 1e9));
    for (const auto& w : r.windows)
      if (w.clipped_ns > 0)
        run.notes.push_back(
            fmt::format("rank {}: step {} ends {:.3f} ms after the last recorded event; cut there "
                        "(the annotation outlived the profiler's recording)",
                        r.trace->rank, w.number, static_cast<double>(w.clipped_ns) / 1e6));
    if (r.coverage.gpu_outside_ops > 0)
      run.notes.push_back(
          fmt::format("rank {}: {} GPU operations ({:.3f} ms of GPU time, {:.3f} ms of it before the "
                      "first step) lie outside the annotated steps and are in no figure",
                      r.trace->rank, r.coverage.gpu_outside_ops, static_cast<double>(r.coverage.gpu_outside_ns) / 1e6,
                      static_cast<double>(r.coverage.gpu_before_ns) / 1e6));
  }
  std::vector<RankWindows> all;
  std::vector<int> ids;
  for (const auto& r : run.ranks) {
    all.push_back({&r.index, &r.windows});
    ids.push_back(r.trace->rank);
  }
  run.kernels = summarizeKernels(all, opt.top_n);
  run.collectives = summarizeCollectives(all);
  run.straggler = findStraggler(all, ids, opt.straggler_share_min, opt.straggler_wait_min);
  // Collectives in more than one process group (data- with tensor- or pipeline-parallel groups): one
  // rank's k-th NCCL kernel is not another's k-th operation, so judge each group by its own
  // sequence numbers (analysis/fleet) and report the group whose straggler costs most.
  std::vector<RankDigest> digests;
  std::set<std::string> group_names;
  for (const auto& r : run.ranks) {
    digests.push_back(digestRank(r));
    for (const auto& c : digests.back().collectives) group_names.insert(digests.back().groups[c.group].name);
  }
  if (group_names.size() >= 2) {
    FleetOptions fo;
    fo.straggler_steps_min = opt.straggler_share_min;
    fo.straggler_wait_min = opt.straggler_wait_min;
    if (auto fleet = analyzeFleet(digests, fo); fleet.ok()) run.straggler = stragglerOfGroups(fleet.value());
  }
  std::vector<JobProfile> jobs;
  for (const auto& r : run.ranks) jobs.push_back(r.job);
  run.job = mergeJobProfiles(jobs, ids);
  return run;
}

}  // namespace gpudoctor
