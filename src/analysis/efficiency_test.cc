#include "analysis/efficiency.h"

#include <gtest/gtest.h>

#include "report/bench_gpu_report.h"

namespace gpudoctor {
namespace efficiency_test {
RunAnalysis twoRanks(std::vector<RankTrace>& traces) {
  traces.resize(2);
  RunAnalysis run;
  for (int r = 0; r < 2; ++r) {
    traces[r].rank = r;
    RankAnalysis ra;
    ra.trace = &traces[r];
    ra.steps.resize(4);
    ra.total.wall_ns = 400'000'000 + r * 100'000'000;  // rank 1 is slower: 125 ms per step
    ra.total.compute_ns = 300'000'000;
    ra.total.pinned_htod = {10, 1'000'000'000, 50'000'000};  // 1 GB in 50 ms: 20 GB/s
    run.ranks.push_back(std::move(ra));
  }
  KernelClassStats bf16;
  bf16.cls = KernelClass::kGemmBf16;
  bf16.dur.total_ns = 900;
  KernelClassStats fp32;
  fp32.cls = KernelClass::kGemmFp32Simt;
  fp32.dur.total_ns = 100;
  run.kernels.classes = {bf16, fp32};
  CollectiveStats c;
  c.collective = "allreduce";
  c.bytes = 1 << 28;
  c.busbw_gbps = 300;
  run.collectives.push_back(c);
  return run;
}

TEST(Efficiency, MfuFromStepTimeAndGivenFlops) {
  std::vector<RankTrace> traces;
  RunAnalysis run = twoRanks(traces);
  Ceilings c = *datasheetCeilings("NVIDIA H200");
  EfficiencyOptions opt;
  opt.flops_per_step = 49.475e12;  // 49.475 TFLOP per 100 ms step = 494.75 TFLOP/s = 50 % of 989.5
  Efficiency e = computeEfficiency(run, c, opt);
  EXPECT_EQ(e.precision, GemmPrecision::kBf16);
  EXPECT_NE(e.precision_reason.find("90 %"), std::string::npos) << e.precision_reason;
  ASSERT_EQ(e.ranks.size(), 2u);
  EXPECT_DOUBLE_EQ(e.ranks[0].step_ms, 100);
  EXPECT_NEAR(e.ranks[0].achieved_tflops, 494.75, 1e-9);
  EXPECT_NEAR(e.ranks[0].mfu, 0.5, 1e-12);
  EXPECT_NEAR(e.ranks[1].mfu, 0.4, 1e-12);  // 125 ms steps
  EXPECT_NEAR(e.mean_mfu, 0.45, 1e-12);
  EXPECT_NEAR(e.ranks[0].compute_share, 0.75, 1e-12);
  ASSERT_EQ(e.copies.size(), 1u);
  EXPECT_EQ(e.copies[0].kind, "h2d pinned");
  EXPECT_NEAR(e.copies[0].gbps, 20, 1e-12);  // 2 GB in 100 ms over both ranks
  EXPECT_NEAR(e.copies[0].share, 20.0 / 64, 1e-12);
  EXPECT_EQ(e.best_busbw_gbps, 300);
  EXPECT_TRUE(e.missing.empty());
  EXPECT_TRUE(e.warnings.empty());
  std::string text = renderEfficiencyText(e);
  EXPECT_NE(text.find("mean MFU 45.0 %"), std::string::npos) << text;
  EXPECT_NE(text.find("67 % of P2P 450.0"), std::string::npos) << text;
  EXPECT_NE(renderEfficiencyJson(e).find("\"mean_mfu\": 0.45"), std::string::npos);
}

TEST(Efficiency, SaysWhatIsMissing) {
  std::vector<RankTrace> traces;
  RunAnalysis run = twoRanks(traces);
  run.kernels.classes.clear();
  Ceilings c;
  c.tflops[static_cast<int>(GemmPrecision::kFp8)] = 1500;
  Efficiency e = computeEfficiency(run, c, {});
  EXPECT_EQ(e.precision, GemmPrecision::kBf16);
  EXPECT_NE(e.precision_reason.find("bf16 assumed"), std::string::npos);
  EXPECT_EQ(e.ranks[0].mfu, 0);
  std::string all;
  for (const auto& m : e.missing) all += m + "\n";
  EXPECT_NE(all.find("no bf16 TFLOP/s"), std::string::npos) << all;
  EXPECT_NE(all.find("--flops-per-step"), std::string::npos) << all;
  EXPECT_NE(all.find("h2d pinned copies"), std::string::npos) << all;
  EXPECT_NE(all.find("no p2p figure"), std::string::npos) << all;
  // A given precision wins over the trace's.
  EfficiencyOptions opt;
  opt.precision = GemmPrecision::kFp8;
  opt.flops_per_step = 15e12;
  Efficiency f = computeEfficiency(run, c, opt);
  EXPECT_EQ(f.precision, GemmPrecision::kFp8);
  EXPECT_NEAR(f.ranks[0].mfu, 0.1, 1e-12);
  EXPECT_TRUE(f.warnings.empty());
}

TEST(Efficiency, WarnsAboutImpossibleFigures) {
  std::vector<RankTrace> traces;
  RunAnalysis run = twoRanks(traces);
  traces[0].devices.push_back(DeviceProps{0, "NVIDIA A100-SXM4-80GB", 0, 108, 8, 0});
  Ceilings c = *datasheetCeilings("NVIDIA H200");
  EfficiencyOptions opt;
  opt.flops_per_step = 200e12;  // 2000 TFLOP/s on a 989.5 TFLOP/s GPU
  Efficiency e = computeEfficiency(run, c, opt);
  ASSERT_EQ(e.warnings.size(), 2u);
  EXPECT_NE(e.warnings[0].find("MFU above 100 %"), std::string::npos) << e.warnings[0];
  EXPECT_NE(e.warnings[1].find("A100"), std::string::npos) << e.warnings[1];
  EXPECT_NE(renderEfficiencyText(e).find("warning: MFU above"), std::string::npos);
  traces[0].devices[0].name = "NVIDIA H200";
  c.device = "NVIDIA H200";
  opt.flops_per_step = 1e12;
  EXPECT_TRUE(computeEfficiency(run, c, opt).warnings.empty());
}

}  // namespace efficiency_test
}  // namespace gpudoctor
