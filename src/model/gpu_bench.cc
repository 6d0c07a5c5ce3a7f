#include "model/gpu_bench.h"

#include <algorithm>

namespace gpudoctor {

bool GpuBenchResult::allPassed() const {
  if (!errors.empty()) return false;
  for (const auto& g : gemm)
    if (!g.check.passed) return false;
  for (const auto& b : bandwidth)
    if (!b.check.passed) return false;
  for (const auto& a : attention)
    if (!a.check.passed) return false;
  for (const auto& f : fusion)
    if (!f.check.passed) return false;
  return true;
}

Ceilings ceilingsFromBench(const GpuBenchResult& r) {
  Ceilings c;
  c.device = r.device;
  c.source = "gpudoctor bench gpu";
  for (const auto& g : r.gemm)
    if (g.check.passed) {
      double& t = c.tflops[static_cast<int>(g.precision)];
      t = std::max(t, g.tflops);
    }
  for (const auto& b : r.bandwidth) {
    if (!b.check.passed) continue;
    double* dst = b.name == "hbm copy"          ? &c.hbm_copy_gbps
                  : b.name == "hbm read"        ? &c.hbm_read_gbps
                  : b.name == "hbm write"       ? &c.hbm_write_gbps
                  : b.name == "h2d pinned"      ? &c.h2d_pinned_gbps
                  : b.name == "h2d pageable"    ? &c.h2d_pageable_gbps
                  : b.name == "d2h pinned"      ? &c.d2h_pinned_gbps
                  : b.name == "d2h pageable"    ? &c.d2h_pageable_gbps
                  : b.name.rfind("p2p", 0) == 0 ? &c.p2p_gbps
                                                : nullptr;
    if (dst) *dst = std::max(*dst, b.gbps);
  }
  return c;
}

}  // namespace gpudoctor
