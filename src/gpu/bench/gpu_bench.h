// `gpudoctor bench gpu`: measured ceilings of this GPU and what each compute optimization buys on
// it. Four parts, each checking its kernels (fresh random inputs, poisoned outputs, FP64 or exact
// references) before timing them with events (median after warm-up, inputs rotated past the L2).
#pragma once
#include <functional>
#include <string>

#include "common/result.h"
#include "model/gpu_bench.h"

namespace gpudoctor {

struct GpuBenchOptions {
  bool quick = false;  // smoke run: fewer shapes and repetitions
  bool tiny = false;   // unit tests: the smallest shapes, 3 repetitions (correctness, not figures)
  bool gemm = true, bandwidth = true, attention = true, fusion = true;
  int device = 0;
  std::function<void(const std::string&)> progress;  // one line per measurement; may be empty
};

// Runs the chosen parts on `device`. An Error (one line) when there is no usable GPU or a CUDA call
// fails outside a measurement; a measurement that cannot run (no FP8, one GPU) becomes a note.
Result<GpuBenchResult> runGpuBench(const GpuBenchOptions& opt);

namespace gpubench {

// What the parts share: the device, its L2 and a stream.
struct BenchContext {
  const GpuBenchOptions* opt = nullptr;
  int device = 0;
  int sm_major = 0, sm_minor = 0;
  size_t l2_bytes = 0;
  void* stream = nullptr;  // cudaStream_t
  // Reports progress when asked for.
  void say(const std::string& line) const {
    if (opt && opt->progress) opt->progress(line);
  }
  // Repetitions timed per figure.
  int reps() const { return opt && opt->tiny ? 3 : opt && opt->quick ? 20 : 30; }
  // True for the unit tests' smallest shapes.
  bool tiny() const { return opt && opt->tiny; }
};

// Each part appends its figures and notes; an Error aborts the run.
Status runGemmBench(const BenchContext& ctx, GpuBenchResult& out);
Status runBandwidthBench(const BenchContext& ctx, GpuBenchResult& out);
Status runAttentionBench(const BenchContext& ctx, GpuBenchResult& out);
Status runFusionBench(const BenchContext& ctx, GpuBenchResult& out);

}  // namespace gpubench
}  // namespace gpudoctor
