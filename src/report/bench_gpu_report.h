// Renders `bench gpu` results (tables with the speedup each optimization buys: TF32/BF16/FP8 over
// FP32/BF16, fused over unfused attention by sequence length with the memory ratio, fused over
// separate elementwise kernels, CUDA graphs over launches) and `analyze --ceilings` efficiency.
#pragma once
#include <string>

#include <vector>

#include "analysis/efficiency.h"
#include "analysis/gpu_speedups.h"
#include "model/gpu_bench.h"

namespace gpudoctor {

// The terminal report, with the datasheet column where the device is known.
std::string renderGpuBenchText(const GpuBenchResult& r, const std::vector<GpuSpeedup>& speedups);
// Every figure as JSON (µs, TFLOP/s, GB/s = 1e9 bytes/s, bytes) plus the speedups (gpuSpeedups).
std::string renderGpuBenchJson(const GpuBenchResult& r, const std::vector<GpuSpeedup>& speedups);
// The efficiency section `analyze --ceilings` adds to its report (`color`: its heading in ANSI bold,
// its warnings yellow).
std::string renderEfficiencyText(const Efficiency& e, bool color = false);
// The same as a JSON object (the value of analyze --json's "efficiency" key).
std::string renderEfficiencyJson(const Efficiency& e);

}  // namespace gpudoctor
