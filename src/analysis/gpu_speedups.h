// What each optimization buys on the measured GPU, from `bench gpu`'s figures: TF32/BF16/FP16 over
// FP32 and FP8 over BF16 GEMM per shape, fused over unfused attention (with the memory ratio), fused
// over separate elementwise kernels, CUDA graphs over launches. Only figures whose check passed count.
#pragma once
#include <string>
#include <vector>

#include "model/gpu_bench.h"

namespace gpudoctor {

struct GpuSpeedup {
  std::string what;         // "GEMM bf16 vs fp32", "attention fused vs unfused", ...
  std::string detail;       // where: "8192x8192x8192", "seq 4096 d 128 causal", "65536 elements"
  double ratio = 0;         // baseline time / optimized time
  double memory_ratio = 0;  // attention: unfused / fused memory (0 elsewhere)
};

// Every speedup the result has both figures for, GEMM first, then attention, then fusion.
std::vector<GpuSpeedup> gpuSpeedups(const GpuBenchResult& r);

}  // namespace gpudoctor
