// The speedups bench gpu publishes, on hand-made figures whose ratios are known.
#include "analysis/gpu_speedups.h"

#include <gtest/gtest.h>

namespace gpudoctor {
namespace {

CheckFigure passed() {
  CheckFigure c;
  c.passed = true;
  return c;
}

TEST(GpuSpeedups, GemmAttentionAndFusionRatios) {
  GpuBenchResult r;
  for (auto [p, us] :
       {std::pair{GemmPrecision::kFp32, 20000.0}, {GemmPrecision::kBf16, 2000.0}, {GemmPrecision::kFp8, 1250.0}}) {
    GemmFigure g;
    g.precision = p;
    g.m = g.n = g.k = 4096;
    g.median_us = us;
    g.check = passed();
    r.gemm.push_back(g);
  }
  for (auto [impl, us, mem] : {std::tuple{"unfused", 3000.0, 8000}, {"fused", 1000.0, 1000}}) {
    AttentionFigure a;
    a.impl = impl;
    a.batch = 4, a.heads = 16, a.seq = 4096, a.head_dim = 128, a.causal = true;
    a.median_us = us;
    a.memory_bytes = mem;
    a.check = passed();
    r.attention.push_back(a);
  }
  for (auto [name, us] : {std::pair{"small separate", 600.0}, {"small separate graph", 200.0}}) {
    FusionFigure f;
    f.name = name;
    f.elements = 65536;
    f.median_us = us;
    f.check = passed();
    r.fusion.push_back(f);
  }
  auto s = gpuSpeedups(r);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].what, "GEMM bf16 vs fp32");
  EXPECT_EQ(s[0].detail, "4096x4096x4096");
  EXPECT_DOUBLE_EQ(s[0].ratio, 10.0);
  EXPECT_EQ(s[1].what, "GEMM fp8 vs bf16");
  EXPECT_DOUBLE_EQ(s[1].ratio, 1.6);
  EXPECT_EQ(s[2].what, "attention fused vs unfused");
  EXPECT_EQ(s[2].detail, "seq 4096 d 128 causal");
  EXPECT_DOUBLE_EQ(s[2].ratio, 3.0);
  EXPECT_DOUBLE_EQ(s[2].memory_ratio, 8.0);
  EXPECT_EQ(s[3].what, "CUDA graph vs launches");
  EXPECT_EQ(s[3].detail, "65536 elements");
  EXPECT_DOUBLE_EQ(s[3].ratio, 3.0);
  // A failed check removes every ratio that needs the figure.
  r.gemm[1].check.passed = false;
  s = gpuSpeedups(r);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].what, "attention fused vs unfused");
}

}  // namespace
}  // namespace gpudoctor
