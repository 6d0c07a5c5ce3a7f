// Results of `bench gpu`: GEMM throughput per precision, memory bandwidths, attention unfused vs
// fused, and elementwise fusion / launch overhead / CUDA graphs. Plain data filled by gpu/bench and
// read by the report and by ceilingsFromBench (the ceilings file).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/ceilings.h"

namespace gpudoctor {

// How a kernel's output compared with its reference before it was timed.
struct CheckFigure {
  bool passed = false;
  int64_t checked = 0;     // elements compared with the reference
  int64_t unwritten = 0;   // elements still poisoned (or non-finite) after the run
  double rel_l2 = 0;       // ||out - ref|| / ||ref||
  double worst_ratio = 0;  // max error / bound (<= 1 passes)
  std::string note;        // what the reference was
};

struct GemmFigure {
  GemmPrecision precision = GemmPrecision::kBf16;
  int64_t m = 0, n = 0, k = 0;
  double median_us = 0;
  double tflops = 0;  // 2mnk / median
  int reps = 0;
  CheckFigure check;
};

struct BandwidthFigure {
  std::string name;   // "hbm copy", "hbm read", "hbm write", "h2d pinned", "p2p 0->1", ...
  int64_t bytes = 0;  // bytes moved per repetition (copy: read + write)
  double median_us = 0;
  double gbps = 0;  // 1e9 bytes/s
  int reps = 0;
  CheckFigure check;
};

struct AttentionFigure {
  std::string impl;  // "unfused" (GEMM + softmax + GEMM, scores in memory) or "fused" (this project's kernel)
  int64_t batch = 0, heads = 0, seq = 0, head_dim = 0;
  bool causal = false;
  double median_us = 0;
  double tflops = 0;         // useful attention FLOPs / median (causal: half)
  int64_t memory_bytes = 0;  // device memory the forward pass needs: Q, K, V, O plus intermediates
  int reps = 0;
  CheckFigure check;
};

struct FusionFigure {
  std::string name;          // "elementwise separate", "elementwise fused", "launch", "graph chain", ...
  int64_t elements = 0;      // tensor elements (0 for empty kernels)
  int kernels = 0;           // kernels per repetition
  double median_us = 0;      // per repetition
  double per_kernel_us = 0;  // median_us / kernels
  int reps = 0;
  CheckFigure check;
};

struct GpuBenchResult {
  std::string device;  // cudaDeviceProp name
  int sm_major = 0, sm_minor = 0, sms = 0, gpus = 0;
  int64_t memory_bytes = 0, l2_bytes = 0;
  std::string driver, runtime;  // "13.0"
  bool quick = false;
  std::vector<GemmFigure> gemm;
  std::vector<BandwidthFigure> bandwidth;
  std::vector<AttentionFigure> attention;
  std::vector<FusionFigure> fusion;
  std::vector<std::string> notes;   // skipped parts and why
  std::vector<std::string> errors;  // parts stopped by an error (their later figures are missing)
  // True when every figure's check passed and no part stopped on an error.
  bool allPassed() const;
};

// The ceilings a run measured: the best TF/s of each precision over the shapes, the bandwidths by name.
Ceilings ceilingsFromBench(const GpuBenchResult& r);

}  // namespace gpudoctor
