// Efficiency against measured ceilings (`analyze --ceilings`): MFU per rank from the step time and
// the FLOPs a step does (the trace does not record FLOPs, so the user gives them), achieved copy
// bandwidth against host<->device ceilings, NCCL bus bandwidth against P2P. Pure arithmetic.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "analysis/run_analysis.h"
#include "model/ceilings.h"

namespace gpudoctor {

struct RankEfficiency {
  int rank = -1;
  int64_t steps = 0;
  double step_ms = 0;          // mean wall time of the selected steps
  double compute_share = 0;    // compute / wall
  double achieved_tflops = 0;  // flops_per_step / step time; 0 without --flops-per-step
  double mfu = 0;              // achieved / peak of the precision; 0 when unknown
};

struct CopyEfficiency {
  std::string kind;  // "h2d pinned", "h2d pageable", "d2h pinned", "d2h pageable"
  int64_t count = 0, bytes = 0, dur_ns = 0;
  double gbps = 0;  // bytes / summed copy time (1e9 bytes/s)
  double ceiling_gbps = 0;
  double share = 0;  // gbps / ceiling; 0 when no ceiling
};

struct Efficiency {
  std::string ceilings_device;
  GemmPrecision precision = GemmPrecision::kBf16;  // the one MFU is measured against
  std::string precision_reason;                    // "most GEMM time is bf16 (93 %)", "given", ...
  double peak_tflops = 0;
  double flops_per_step = 0;  // per rank, as given
  std::vector<RankEfficiency> ranks;
  double mean_mfu = 0;                 // over ranks with a figure
  std::vector<CopyEfficiency> copies;  // kinds that occurred
  double best_busbw_gbps = 0;          // largest NCCL busbw in the trace
  std::string best_busbw_what;         // "allreduce 256 MB"
  double p2p_gbps = 0;                 // ceiling
  std::vector<std::string> missing;    // figures that could not be computed, and what they need
  std::vector<std::string> warnings;   // figures that look wrong (MFU over 100 %, another GPU's ceilings)
};

struct EfficiencyOptions {
  double flops_per_step = 0;               // training FLOPs per step per rank; 0 = unknown
  std::optional<GemmPrecision> precision;  // MFU against this precision; default: the dominant GEMM's
};

// The GEMM precision that takes most GEMM kernel time; nullopt without GEMM kernels of a known precision.
std::optional<GemmPrecision> dominantGemmPrecision(const KernelSummary& k, double* share = nullptr);
// Efficiency figures of a run against ceilings.
Efficiency computeEfficiency(const RunAnalysis& run, const Ceilings& c, const EfficiencyOptions& opt);

}  // namespace gpudoctor
