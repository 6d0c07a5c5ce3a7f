#include "analysis/gpu_speedups.h"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

namespace gpudoctor {

namespace {

const GemmFigure* findGemm(const GpuBenchResult& r, GemmPrecision p, const GemmFigure& shape) {
  for (const auto& g : r.gemm)
    if (g.precision == p && g.m == shape.m && g.n == shape.n && g.k == shape.k && g.check.passed) return &g;
  return nullptr;
}

}  // namespace

std::vector<GpuSpeedup> gpuSpeedups(const GpuBenchResult& r) {
  std::vector<GpuSpeedup> out;
  // GEMM: each shape once, the ratios users ask about.
  std::vector<std::tuple<int64_t, int64_t, int64_t>> shapes;
  for (const auto& g : r.gemm) {
    auto s = std::make_tuple(g.m, g.n, g.k);
    if (std::find(shapes.begin(), shapes.end(), s) == shapes.end()) shapes.push_back(s);
  }
  const std::pair<GemmPrecision, GemmPrecision> pairs[] = {{GemmPrecision::kTf32, GemmPrecision::kFp32},
                                                           {GemmPrecision::kBf16, GemmPrecision::kFp32},
                                                           {GemmPrecision::kFp16, GemmPrecision::kFp32},
                                                           {GemmPrecision::kFp8, GemmPrecision::kBf16}};
  for (auto [m, n, k] : shapes) {
    GemmFigure shape;
    shape.m = m, shape.n = n, shape.k = k;
    for (auto [fast, base] : pairs) {
      const GemmFigure* a = findGemm(r, fast, shape);
      const GemmFigure* b = findGemm(r, base, shape);
      if (a && b && a->median_us > 0)
        out.push_back({fmt::format("GEMM {} vs {}", gemmPrecisionName(fast), gemmPrecisionName(base)),
                       fmt::format("{}x{}x{}", m, n, k), b->median_us / a->median_us, 0});
    }
  }
  for (const auto& f : r.attention) {
    if (f.impl.rfind("fused", 0) != 0 || !f.check.passed) continue;
    for (const auto& u : r.attention)
      if (u.impl == "unfused" && u.check.passed && u.seq == f.seq && u.batch == f.batch && u.heads == f.heads &&
          u.head_dim == f.head_dim && u.causal == f.causal && f.median_us > 0 && f.memory_bytes > 0)
        out.push_back({"attention " + f.impl + " vs unfused",
                       fmt::format("seq {} d {}{}", f.seq, f.head_dim, f.causal ? " causal" : ""),
                       u.median_us / f.median_us, static_cast<double>(u.memory_bytes) / f.memory_bytes});
  }
  auto fusion = [&](const std::string& name) -> const FusionFigure* {
    for (const auto& f : r.fusion)
      if (f.name == name && f.check.passed) return &f;
    return nullptr;
  };
  for (auto [fast, base, what] :
       {std::tuple{"elementwise fused", "elementwise separate", "elementwise fused vs separate"},
        std::tuple{"small fused", "small separate", "small elementwise fused vs separate"},
        std::tuple{"small separate graph", "small separate", "CUDA graph vs launches"}}) {
    const FusionFigure* a = fusion(fast);
    const FusionFigure* b = fusion(base);
    if (a && b && a->median_us > 0)
      out.push_back({what, fmt::format("{} elements", a->elements), b->median_us / a->median_us, 0});
  }
  return out;
}

}  // namespace gpudoctor
