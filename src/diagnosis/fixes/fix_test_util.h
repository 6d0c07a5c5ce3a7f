// For the fixes' tests: the measured H200 ceilings, and a run with no ranks whose job profile a test fills.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/run_analysis.h"
#include "analysis/trace_builder_test_util.h"
#include "diagnosis/fixes/registry.h"
#include "model/ceilings.h"

namespace gpudoctor::testing {

inline Ceilings h200() { return *builtinCeilings("NVIDIA H200"); }

// The fix's edit on the un-profiled defaults; the basis must say something whenever it applies.
inline bool applyFix(const Fix& f, const Ceilings* c, const RunAnalysis* run, ReplayEdits& ed) {
  std::string basis;
  const bool ok = f.edit({c, run}, ed, basis);
  if (ok) {
    EXPECT_FALSE(basis.empty()) << f.id();
  }
  return ok;
}

// A GPU-bound run of 4 steps: each launches these kernels (1 ms each, back to back on one stream,
// launched ahead of the GPU) and waits for them.
inline std::vector<RankTrace> gpuBoundSteps(const std::vector<const char*>& kernels) {
  TraceBuilder b;
  int64_t corr = 1, t = 1000;
  for (int s = 0; s < 4; ++s) {
    const int64_t begin = t;
    int64_t gpu = t + 10'000;
    for (const char* n : kernels) {
      b.launch(corr++, t, t + 4000, EventKind::kKernel, TraceBuilder::kStream7, n, gpu, gpu + 1'000'000);
      t += 5000, gpu += 1'000'000;
    }
    b.add(EventKind::kRuntimeCall, TraceBuilder::kHost, "cudaDeviceSynchronize", t, gpu + 1000, corr++);
    t = gpu + 2000;
    b.step(s + 1, begin, t);
  }
  std::vector<RankTrace> v;
  v.push_back(b.done());
  return v;
}

}  // namespace gpudoctor::testing
