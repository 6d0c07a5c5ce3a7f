// analyze's and checklist's options, shared by the verb (analyze_cmd) and the streaming mode's
// report (fleet_answer).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace gpudoctor::cli {

struct AnalyzeArgs {
  std::vector<std::string> paths;
  std::string steps = "all";
  std::string json;
  std::string html;
  std::string thresholds;
  std::string nccl_env;
  std::vector<std::string> nccl_logs;
  size_t findings = 8;
  bool checklist_only = false;
  bool strict = false;  // checklist: exit 1 when an item fails
  size_t top = 10;
  int rank = -1;
  unsigned threads = 0;
  bool quiet = false;
  bool no_what_if = false;
  double measured_step_ms = 0;  // --measured-step-ms: the step timed without the profiler
  std::string ceilings;         // --ceilings FILE: efficiency figures against measured ceilings
  double flops_per_step = 0;    // --flops-per-step: training FLOPs per step per rank, for MFU
  std::string mfu_precision;    // --mfu-precision: fp32|tf32|fp16|bf16|fp8 (default: the dominant GEMM's)
  std::string summary_out;      // --summary-out FILE: the rank summaries
  bool mpi = false;             // --mpi: the files shared among MPI processes, summaries gathered on process 0
  bool stream = false;          // --stream: the streaming mode whatever the rank count
  bool allow_missing = false;   // --allow-missing-ranks
  std::string color = "auto";   // --color: auto|always|never
};

// More traces than this are analyzed in the streaming mode (one trace in memory per thread).
inline constexpr size_t kInMemoryMax = 64;

// Runs analyze (or checklist, with checklist_only): the exit code (cli/exit_codes.h), its error line printed.
int runAnalyze(const AnalyzeArgs& a);

}  // namespace gpudoctor::cli
