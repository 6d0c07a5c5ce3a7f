// GPU tests (ctest label gpu): every bench gpu kernel is correct on small shapes, and the checking
// machinery itself catches what it must (poison counted, device inputs equal the host's regeneration).
// Skipped where there is no CUDA device.
#include "gpu/bench/gpu_bench.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>

#include "gpu/bench/device_util.h"

namespace gpudoctor {
namespace {

bool haveDevice() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

GpuBenchResult runTiny(bool gemm, bool bandwidth, bool attention, bool fusion) {
  GpuBenchOptions opt;
  opt.tiny = true;
  opt.gemm = gemm, opt.bandwidth = bandwidth, opt.attention = attention, opt.fusion = fusion;
  auto r = runGpuBench(opt);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? r.value() : GpuBenchResult{};
}

TEST(GpuBenchDevice, PoisonIsCountedAndInputsMatchTheHost) {
  if (!haveDevice()) GTEST_SKIP() << "no CUDA device";
  using namespace gpubench;
  DeviceBuffer b;
  ASSERT_TRUE(b.alloc(4096 * 4).ok());
  for (NumFormat f : {NumFormat::kFp32, NumFormat::kFp16, NumFormat::kBf16, NumFormat::kFp8E4M3}) {
    poison(b.get(), f, 4096, nullptr);
    auto n = countNonFinite(b.get(), f, 4096, nullptr);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(n.value(), 4096) << static_cast<int>(f);
    fillUniform(b.get(), f, 1000, 99, 1.f, nullptr);
    n = countNonFinite(b.get(), f, 4096, nullptr);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(n.value(), 4096 - 1000) << static_cast<int>(f);
  }
  uint64_t seed = freshSeed();
  fillUniform(b.get(), NumFormat::kFp32, 4096, seed, 2.f, nullptr);
  auto h = toHost(b.get(), NumFormat::kFp32, 0, 4096);
  ASSERT_TRUE(h.ok());
  int zeros = 0;
  for (size_t i = 0; i < 4096; ++i) {
    double v = decodeElement(NumFormat::kFp32, h.value().data(), i);
    EXPECT_EQ(v, uniformAt(seed, i, 2.0)) << i;
    zeros += v == 0;
  }
  EXPECT_LT(zeros, 4);
}

TEST(GpuBenchDevice, GemmEveryPrecisionCorrect) {
  if (!haveDevice()) GTEST_SKIP() << "no CUDA device";
  auto r = runTiny(true, false, false, false);
  EXPECT_GE(r.gemm.size(), 4u);
  for (const auto& g : r.gemm) {
    EXPECT_TRUE(g.check.passed) << gemmPrecisionName(g.precision) << ": " << g.check.note;
    EXPECT_GT(g.tflops, 0);
  }
}

TEST(GpuBenchDevice, BandwidthPathsCorrect) {
  if (!haveDevice()) GTEST_SKIP() << "no CUDA device";
  auto r = runTiny(false, true, false, false);
  EXPECT_GE(r.bandwidth.size(), 7u);
  for (const auto& b : r.bandwidth) {
    EXPECT_TRUE(b.check.passed) << b.name << ": " << b.check.note;
    EXPECT_GT(b.gbps, 0) << b.name;
  }
}

TEST(GpuBenchDevice, AttentionFusedAndUnfusedMatchFp64) {
  if (!haveDevice()) GTEST_SKIP() << "no CUDA device";
  auto r = runTiny(false, false, true, false);
  EXPECT_EQ(r.attention.size(), 12u);  // 4 shapes (d 64/128, causal or not) x 3 implementations
  for (const auto& a : r.attention)
    EXPECT_TRUE(a.check.passed) << a.impl << " seq " << a.seq << " d " << a.head_dim << (a.causal ? " causal" : "")
                                << ": " << a.check.note;
}

TEST(GpuBenchDevice, FusionAndGraphsCorrect) {
  if (!haveDevice()) GTEST_SKIP() << "no CUDA device";
  auto r = runTiny(false, false, false, true);
  EXPECT_EQ(r.fusion.size(), 7u);
  for (const auto& f : r.fusion) EXPECT_TRUE(f.check.passed) << f.name << ": " << f.check.note;
}

}  // namespace
}  // namespace gpudoctor
