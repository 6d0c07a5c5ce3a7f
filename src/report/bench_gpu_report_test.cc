#include "report/bench_gpu_report.h"

#include <gtest/gtest.h>

#include "report/schema_test_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace gpudoctor {
namespace bench_gpu_report_test {
CheckFigure ok() {
  CheckFigure c;
  c.passed = true;
  c.checked = 256;
  return c;
}

GpuBenchResult sample() {
  GpuBenchResult r;
  r.device = "NVIDIA H200";
  r.sm_major = 9;
  r.gpus = 1;
  auto gemm = [&](GemmPrecision p, double us) {
    GemmFigure g;
    g.precision = p;
    g.m = g.n = g.k = 8192;
    g.median_us = us;
    g.tflops = 2.0 * 8192 * 8192 * 8192 / (us * 1e-6) / 1e12;
    g.check = ok();
    r.gemm.push_back(g);
  };
  gemm(GemmPrecision::kFp32, 20000);
  gemm(GemmPrecision::kTf32, 4000);
  gemm(GemmPrecision::kBf16, 2000);
  gemm(GemmPrecision::kFp8, 1250);
  auto att = [&](const std::string& impl, int64_t seq, double us, int64_t mem) {
    AttentionFigure a;
    a.impl = impl;
    a.batch = 16384 / seq, a.heads = 16, a.seq = seq, a.head_dim = 128;
    a.median_us = us;
    a.memory_bytes = mem;
    a.check = ok();
    r.attention.push_back(a);
  };
  att("unfused", 4096, 3000, 8000);
  att("fused", 4096, 1000, 1000);
  auto fus = [&](const std::string& name, double us, int kernels) {
    FusionFigure f;
    f.name = name;
    f.elements = 65536;
    f.kernels = kernels;
    f.median_us = us;
    f.per_kernel_us = us / kernels;
    f.check = ok();
    r.fusion.push_back(f);
  };
  fus("elementwise separate", 4000, 4);
  fus("elementwise fused", 1000, 1);
  fus("small separate", 600, 200);
  fus("small separate graph", 200, 200);
  BandwidthFigure b;
  b.name = "hbm copy";
  b.bytes = 2LL << 30;
  b.median_us = 500;
  b.gbps = 4295;
  b.check = ok();
  r.bandwidth.push_back(b);
  return r;
}

TEST(BenchGpuReport, TextShowsSpeedupsAndDatasheet) {
  std::string t = renderGpuBenchText(sample(), gpuSpeedups(sample()));
  EXPECT_NE(t.find("GEMM tf32 vs fp32"), std::string::npos) << t;
  EXPECT_NE(t.find("5.00x"), std::string::npos) << t;   // TF32 over FP32
  EXPECT_NE(t.find("10.00x"), std::string::npos) << t;  // BF16 over FP32
  EXPECT_NE(t.find("1.60x"), std::string::npos) << t;   // FP8 over BF16
  EXPECT_NE(t.find("attention fused vs unfused"), std::string::npos) << t;
  EXPECT_NE(t.find("3.00x"), std::string::npos) << t;
  EXPECT_NE(t.find("8.0x less"), std::string::npos) << t;
  EXPECT_NE(t.find("CUDA graph vs launches"), std::string::npos) << t;
  EXPECT_NE(t.find("989.5"), std::string::npos) << t;  // the datasheet column
  EXPECT_EQ(t.find("SOME CHECKS FAILED"), std::string::npos) << t;
}

TEST(BenchGpuReport, FailedChecksAreMarkedAndGiveNoSpeedup) {
  GpuBenchResult r = sample();
  r.attention[1].check.passed = false;
  r.attention[1].check.unwritten = 12;
  std::string t = renderGpuBenchText(r, gpuSpeedups(r));
  EXPECT_NE(t.find("FAIL (12 unwritten)"), std::string::npos) << t;
  EXPECT_NE(t.find("SOME CHECKS FAILED"), std::string::npos) << t;
  EXPECT_EQ(t.find("attention fused vs unfused"), std::string::npos) << t;
  GpuBenchResult e = sample();
  e.errors.push_back("attention stopped: an illegal memory access was encountered");
  EXPECT_FALSE(e.allPassed());
  std::string te = renderGpuBenchText(e, gpuSpeedups(e));
  EXPECT_NE(te.find("ERROR: attention stopped"), std::string::npos) << te;
  EXPECT_NE(te.find("SOME CHECKS FAILED"), std::string::npos) << te;
}

TEST(BenchGpuReport, JsonParsesWithEveryPart) {
  auto j = nlohmann::json::parse(renderGpuBenchJson(sample(), gpuSpeedups(sample())));
  EXPECT_EQ(j["device"]["name"], "NVIDIA H200");
  EXPECT_EQ(j["gemm"].size(), 4u);
  EXPECT_EQ(j["gemm"][0]["precision"], "fp32");
  EXPECT_EQ(j["attention"][1]["impl"], "fused");
  EXPECT_TRUE(j["all_checks_passed"].get<bool>());
  bool found = false;
  for (const auto& s : j["speedups"])
    if (s["what"] == "elementwise fused vs separate") {
      found = true;
      EXPECT_DOUBLE_EQ(s["speedup"].get<double>(), 4.0);
    }
  EXPECT_TRUE(found);
}

TEST(BenchGpuReport, JsonValidatesAgainstItsSchema) {
  EXPECT_EQ(testing::schemaProblems("bench_gpu", renderGpuBenchJson(sample(), gpuSpeedups(sample()))), "");
}

// scripts/device/gpu_bench_summary.py reads what renderGpuBenchJson writes (and a torch JSON beside it).
TEST(BenchGpuReport, SummaryScriptReadsTheJson) {
  if (std::system("python3 -c 1 >/dev/null 2>&1") != 0) GTEST_SKIP() << "no python3";
  namespace fs = std::filesystem;
  fs::path d = fs::temp_directory_path() / ("gpudoctor_summary_" + std::to_string(::getpid()));
  fs::create_directories(d);
  std::ofstream(d / "bench.json") << renderGpuBenchJson(sample(), gpuSpeedups(sample()));
  std::ofstream(d / "torch.json") << R"({"torch": "2.11", "cuda": "13.0", "cudnn": 91500,
    "gemm": [{"precision": "bf16", "m": 8192, "n": 8192, "k": 8192, "median_us": 1900, "tflops": 578.7}],
    "attention": [{"impl": "cudnn", "batch": 4, "heads": 16, "seq": 4096, "head_dim": 128, "causal": false,
                   "median_us": 500, "tflops": 1, "memory_bytes": 900}]})";
  std::string cmd = "python3 " + std::string(GPUDOCTOR_SOURCE_DIR) + "/scripts/device/gpu_bench_summary.py " +
                    (d / "bench.json").string() + " " + (d / "torch.json").string() + " > " + (d / "out.md").string();
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream f(d / "out.md");
  std::string md((std::istreambuf_iterator<char>(f)), {});
  EXPECT_NE(md.find("| 8192x8192x8192 | bf16 | 549.8 | 578.7 | 0.95 | 989.5 | 56 % | ok"), std::string::npos) << md;
  // seq 4096: unfused 3 ms, ours 1 ms, cuDNN 0.5 ms: 3x over unfused, 8x less memory, 2x cuDNN's time.
  EXPECT_NE(md.find("| 4096 | 128 | no | 3.000 | 1.000 | - | 0.500 | - | 3.00x | 8.0x | 2.00 |"), std::string::npos)
      << md;
  fs::remove_all(d);
}

}  // namespace bench_gpu_report_test
}  // namespace gpudoctor
