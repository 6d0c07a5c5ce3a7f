#include "sources/ceilings_file/ceilings_file.h"

#include <gtest/gtest.h>

#include "model/gpu_bench.h"

namespace gpudoctor {
namespace ceilings_file_test {
TEST(CeilingsFile, RoundTrip) {
  auto sheet = datasheetCeilings("NVIDIA H200");
  ASSERT_TRUE(sheet);
  EXPECT_EQ(sheet->peak(GemmPrecision::kBf16), 989.5);
  EXPECT_EQ(sheet->hbm_copy_gbps, 4800);
  auto back = parseCeilingsJson(ceilingsToJson(*sheet), "x.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back.value().tflops, sheet->tflops);
  EXPECT_EQ(back.value().p2p_gbps, 450);
  EXPECT_EQ(back.value().device, sheet->device);
  EXPECT_FALSE(datasheetCeilings("NVIDIA A100-SXM4-80GB"));
  EXPECT_EQ(datasheetCeilings("NVIDIA H100 80GB HBM3")->hbm_read_gbps, 3350);
}

void expectError(const std::string& text, const std::string& needle) {
  auto r = parseCeilingsJson(text, "c.json");
  ASSERT_FALSE(r.ok()) << text;
  EXPECT_EQ(r.error().message.rfind("c.json: ", 0), 0u) << r.error().message;
  EXPECT_NE(r.error().message.find(needle), std::string::npos) << r.error().message;
}

TEST(CeilingsFile, ErrorsNameTheKey) {
  expectError("{", "not valid JSON");
  expectError("[1]", "JSON object");
  expectError(R"({"tflops": {"bf16": 900}, "hbm": 3})", "hbm: unknown key");
  expectError(R"({"tflops": {"bf17": 900}})", "tflops.bf17: unknown precision");
  expectError(R"({"tflops": {"bf16": "fast"}})", "tflops.bf16: must be a number");
  expectError(R"({"tflops": {"bf16": -1}})", "tflops.bf16: must be a non-negative");
  expectError(R"({"tflops": {"bf16": 900}, "bandwidth_gbps": {"nvlink": 1}})", "bandwidth_gbps.nvlink: unknown key");
  expectError(R"({"tflops": {}})", "tflops: no precision");
  expectError(R"({"format": "other", "tflops": {"bf16": 1}})", "format:");
  expectError(R"({"version": 2, "tflops": {"bf16": 1}})", "version:");
  auto ok = parseCeilingsJson(R"({"tflops": {"fp8": 1500.5}, "bandwidth_gbps": {"h2d_pinned": 55}})", "c.json");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok.value().peak(GemmPrecision::kFp8), 1500.5);
  EXPECT_EQ(ok.value().peak(GemmPrecision::kBf16), 0);
  EXPECT_EQ(ok.value().h2d_pinned_gbps, 55);
  EXPECT_FALSE(loadCeilingsFile("/nonexistent/ceilings.json").ok());
}

TEST(CeilingsFile, FromBenchTakesBestPassingFigures) {
  GpuBenchResult r;
  r.device = "NVIDIA H200";
  GemmFigure g;
  g.precision = GemmPrecision::kBf16;
  g.tflops = 700;
  g.check.passed = true;
  r.gemm.push_back(g);
  g.tflops = 750;
  r.gemm.push_back(g);
  g.tflops = 5000;  // failed its check: not a ceiling
  g.check.passed = false;
  r.gemm.push_back(g);
  BandwidthFigure b;
  b.name = "hbm copy";
  b.gbps = 4100;
  b.check.passed = true;
  r.bandwidth.push_back(b);
  b.name = "p2p 0->1";
  b.gbps = 380;
  r.bandwidth.push_back(b);
  b.name = "p2p 1->0";
  b.gbps = 390;
  r.bandwidth.push_back(b);
  Ceilings c = ceilingsFromBench(r);
  EXPECT_EQ(c.peak(GemmPrecision::kBf16), 750);
  EXPECT_EQ(c.peak(GemmPrecision::kFp32), 0);
  EXPECT_EQ(c.hbm_copy_gbps, 4100);
  EXPECT_EQ(c.p2p_gbps, 390);
  EXPECT_EQ(c.source, "gpudoctor bench gpu");
  EXPECT_FALSE(r.allPassed());
}

}  // namespace ceilings_file_test
}  // namespace gpudoctor
