// analyze's and checklist's command lines (the verbs run in analyze_cmd.cc).
#include <fmt/format.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "cli/analyze_args.h"
#include "cli/color_option.h"
#include "cli/commands.h"
#include "cli/json_output.h"
#include "cli/usage.h"

namespace gpudoctor::cli {

namespace {
void addCommonOptions(CLI::App* cmd, AnalyzeArgs* args) {
  cmd->add_option("paths", args->paths,
                  "Trace files (.json or .json.gz) or directories of per-rank traces; rank from the trace's "
                  "distributedInfo, else file order. None: the bundled 2-rank example.");
  cmd->add_option("--steps", args->steps, "Steps to measure: all (default), N, N-M, or a list like 2,4-6")
      ->capture_default_str();
  addJsonOption(cmd, &args->json, "every figure and the definitions")->type_name("FILE");
  cmd->add_option("--top", args->top, "Number of kernels in the top-kernels table")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--rank", args->rank, "Rank whose steps are listed in detail (default: the first)")
      ->check(wholeNumber());
  cmd->add_option("--threads", args->threads, "Parser threads (default: one per core, at most one per file)")
      ->check(wholeNumber());
  addQuiet(cmd, &args->quiet);
  addColorOption(cmd, &args->color);
  cmd->add_flag("--no-what-if", args->no_what_if,
                "Skip the replay that predicts each fix's speedup and the plan (findings keep their upper bounds; "
                "--json still keeps the un-profiled step alone, for compare)");
  cmd->add_option("--thresholds", args->thresholds,
                  "TOML file overriding judgement thresholds (keys: gpu_util_min, comm_share_max, io_wait_max, ...; "
                  "see docs/reference/analyze.md)")
      ->type_name("FILE");
  cmd->add_option("--nccl-env", args->nccl_env,
                  "The job's NCCL settings (export lines, env list or NCCL INFO log) to judge alongside the trace")
      ->type_name("FILE");
  cmd->add_option("--nccl-log", args->nccl_logs,
                  "The job's NCCL_DEBUG=INFO logs: transports, GDR, channels and NCCL warnings become findings")
      ->type_name("FILE...");
  cmd->add_option("--html", args->html,
                  "Also write a self-contained HTML report with charts to FILE ('-': the page alone, "
                  "on stdout)")
      ->type_name("FILE|-");
  cmd->add_option("--summary-out", args->summary_out,
                  "Also write every rank's summary (kilobytes per rank and step) to FILE (.gdsum, or .gdsum.gz "
                  "compressed; '-': alone on stdout): analyze reads it back like a trace, for the cross-rank analyses")
      ->type_name("FILE|-");
  cmd->add_flag("--stream", args->stream,
                fmt::format("Streaming mode whatever the rank count (automatic beyond {} traces or with summaries): "
                            "one trace in memory per thread, the cross-rank analyses, and the findings and plan of the "
                            "slowest, the median and the straggler rank, read in full afterwards",
                            kInMemoryMax));
  cmd->add_flag("--mpi", args->mpi,
                "Run under mpirun or srun: each process analyzes its share of the files, process 0 gathers the "
                "summaries and reports (e.g. mpirun -np 8 gpudoctor analyze --mpi DIR --json out.json)");
  cmd->add_flag("--allow-missing-ranks", args->allow_missing,
                "Streaming mode: analyze even when ranks of the job's world size have no trace (they are named in "
                "the notes)");
}
}  // namespace

std::function<int()> addAnalyze(CLI::App& app) {
  auto args = std::make_shared<AnalyzeArgs>();
  auto* cmd = app.add_subcommand(
      "analyze",
      "Time breakdown of PyTorch profiler (Kineto) traces and what to fix first: findings ranked by the step "
      "time they can save, with evidence and the code or env change; per rank and step GPU busy / compute / "
      "NCCL (overlapped, exposed) / copies / idle and why; host data loading, syncs and launch latency; kernel "
      "classes; NCCL bandwidth; stragglers. Exact interval arithmetic on integer nanoseconds.");
  addCommonOptions(cmd, args.get());
  cmd->add_option("--findings", args->findings, "Findings shown in the terminal (0: none)")
      ->capture_default_str()
      ->check(wholeNumber());
  cmd->add_option("--measured-step-ms", args->measured_step_ms,
                  "The step time the job logs when it runs without the profiler (same model, batch and machine), "
                  "in ms: the replay's un-profiled step is matched to it (the profiler's estimated cost scaled) "
                  "and every predicted speedup starts from it. Without it the profiler's cost is estimated from "
                  "the trace (e.g. --measured-step-ms 18.4)")
      ->type_name("MS")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            char* end = nullptr;
            const double v = std::strtod(s.c_str(), &end);
            return end != s.c_str() && *end == '\0' && v >= 1e-3 && v <= 3.6e6
                       ? ""
                       : s + " is not a step time in ms (0.001 to 3600000)";
          },
          "MS", "step time"))
      ->excludes("--no-what-if");
  cmd->add_option(
         "--ceilings", args->ceilings,
         "Ceilings JSON (gpudoctor bench gpu --ceilings-out, or --datasheet H200): adds MFU and % of bandwidth")
      ->type_name("FILE");
  cmd->add_option("--flops-per-step", args->flops_per_step,
                  "Training FLOPs per step per rank, for MFU (≈ 6 × parameters × tokens per step per rank)")
      ->check(positive());
  cmd->add_option("--mfu-precision", args->mfu_precision,
                  "Peak to measure MFU against: fp32, tf32, fp16, bf16, fp8 "
                  "(default: the precision of most GEMM time)");
  return [args] { return runAnalyze(*args); };
}

std::function<int()> addChecklist(CLI::App& app) {
  auto args = std::make_shared<AnalyzeArgs>();
  args->checklist_only = true;
  auto* cmd = app.add_subcommand(
      "checklist",
      "The optimization checklist (compute, communication, IO, memory, monitoring): each item pass / fail / "
      "not measurable from the traces, with its evidence. Same inputs and options as analyze.");
  addCommonOptions(cmd, args.get());
  cmd->add_flag("--strict", args->strict, "Exit 1 when any item fails (a CI gate); not-measurable items do not fail");
  return [args] { return runAnalyze(*args); };
}

}  // namespace gpudoctor::cli
