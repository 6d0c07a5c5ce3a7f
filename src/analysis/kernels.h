// Kernel statistics over the selected steps: per class (count, total, mean, median, share of
// kernel time) and the top kernels by total time.
#pragma once
#include <array>
#include <string>
#include <vector>

#include "analysis/breakdown.h"
#include "analysis/kernel_class.h"

namespace gpudoctor {

struct KernelClassStats {
  KernelClass cls = KernelClass::kOther;
  DurationStats dur;
  double share = 0;  // of the summed duration of all kernels
};

struct KernelStats {
  std::string name;
  KernelClass cls = KernelClass::kOther;
  // The operator that launches it most often, with its input shapes where the trace has them
  // ("aten::addmm 64x512,512x2048"); "" when no operator links to it (External id).
  std::string op;
  DurationStats dur;
  double share = 0;
};

struct KernelSummary {
  int64_t kernels = 0;
  int64_t total_ns = 0;                   // summed kernel durations (kernels on several streams may overlap)
  std::vector<KernelClassStats> classes;  // non-empty classes, by total time
  std::vector<KernelStats> top;           // top-N by total time
  DurationStats non_nccl;                 // every kernel but NCCL's: median size of compute work
  bool fused_optimizer = false;           // an optimizer kernel of a fused implementation ran
};

// Kernels that start inside the selected windows of the given ranks (one rank, or all of them).
KernelSummary summarizeKernels(const std::vector<RankWindows>& ranks, size_t top_n);

}  // namespace gpudoctor
