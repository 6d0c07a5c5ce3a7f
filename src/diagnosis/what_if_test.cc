// Predictions on the measured validation set (testdata/whatif, docs/whatif_validation.md): each
// editable fix's predicted speedup against the speedup measured without the profiler, and the
// healthy job told nothing buys more than 5 %.
#include "diagnosis/what_if.h"

#include <gtest/gtest.h>

#include "analysis/run_test_util.h"
#include "diagnosis/diagnosis.h"

namespace gpudoctor {
namespace {

Diagnosis diagnoseJob(const std::string& trace, std::unique_ptr<testing::Loaded>& keep) {
  keep = testing::loadRun({testing::srcPath("testdata/whatif/" + trace + ".pt.trace.json.gz")});
  return diagnose(keep->run, Thresholds::defaults());
}

const Finding* finding(const Diagnosis& d, const std::string& id) {
  for (const auto& f : d.findings)
    if (f.id == id) return &f;
  return nullptr;
}

// Measured un-profiled speedups (measurements.json: base median / fixed median).
struct Case {
  const char* job;
  const char* finding;
  double measured;
  double max_error;  // the figure reached (what-if issue: 25 % worst); a regression gate
};

TEST(WhatIf, PredictedFixesAgainstTheMeasuredOnes) {
  for (const Case& c : {Case{"item_sync__base", "sync.blocking", 1.46, 0.10},
                        Case{"pageable_copies__base", "input.pageable_copies", 3.71, 0.15},
                        Case{"gpt_fp32_naive__base", "precision.fp32_gemm", 1.74, 0.10},
                        Case{"loader_bound__bf16", "input.loader_on_critical_path", 16.55 / 10.82, 0.15},
                        Case{"gpt_launch_bound__base", "launch.overhead", 7.51, 0.40},
                        Case{"foreach_false_optimizer__base", "optimizer.unfused", 2.61, 0.15}}) {
    std::unique_ptr<testing::Loaded> keep;
    Diagnosis d = diagnoseJob(c.job, keep);
    ASSERT_TRUE(d.what_if.available) << c.job << ": " << d.what_if.basis;
    EXPECT_EQ(d.what_if.replayed_step_ns, d.what_if.traced_step_ns) << c.job;
    const Finding* f = finding(d, c.finding);
    ASSERT_NE(f, nullptr) << c.job << " has no " << c.finding;
    ASSERT_TRUE(f->what_if.available) << c.job;
    EXPECT_NEAR(f->what_if.speedup / c.measured, 1.0, c.max_error) << c.job << " " << c.finding;
    EXPECT_FALSE(f->what_if.basis.empty());
  }
}

TEST(WhatIf, TheHealthyJobIsPromisedNothing) {
  std::unique_ptr<testing::Loaded> keep;
  Diagnosis d = diagnoseJob("healthy__base", keep);
  ASSERT_TRUE(d.what_if.available);
  for (const auto& f : d.findings)
    if (f.what_if.available) EXPECT_LE(f.what_if.speedup, 1.05) << f.id;
  // Un-profiled within the fitted model's reach of the measured 14.17 ms.
  EXPECT_NEAR(d.what_if.unprofiled_step_ns / 14.17e6, 1.0, 0.10);
}

// The plan applies fixes one after another, the best first; each step gains, the speedups are
// cumulative and each names what leads afterwards.
TEST(WhatIf, ThePlanOrdersFixesByWhatTheyBuy) {
  std::unique_ptr<testing::Loaded> keep;
  Diagnosis d = diagnoseJob("loader_bound__base", keep);
  ASSERT_GE(d.plan.size(), 2u);
  EXPECT_EQ(d.plan[0].fix, "bf16");  // measured 2.10x; workers alone 1.00x
  EXPECT_EQ(d.plan[1].fix, "loader_workers");  // measured with bf16: 3.22x
  EXPECT_NEAR(d.plan[1].speedup / 3.22, 1.0, 0.10);
  double last = 1;
  for (const auto& p : d.plan) {
    EXPECT_GT(p.speedup, last * 1.01) << p.fix;
    last = p.speedup;
    EXPECT_FALSE(p.next_bottleneck.empty());
    EXPECT_FALSE(p.finding.empty());
    EXPECT_NEAR(static_cast<double>(d.what_if.unprofiled_step_ns) / static_cast<double>(p.step_ns), p.speedup, 1e-3);
  }
  // The workers alone buy nothing while the FP32 kernels hide the loader: not a warning.
  for (const auto& f : d.findings)
    if (f.id == "input.loader_on_critical_path" && f.what_if.available) {
      EXPECT_LT(f.what_if.speedup, 1.05);
      EXPECT_EQ(f.severity, Severity::kInfo);
    }
  EXPECT_EQ(d.what_if.bottleneck, "compute");
  // The healthy job: no plan.
  Diagnosis h = diagnoseJob("healthy__base", keep);
  EXPECT_TRUE(h.plan.empty());
}

TEST(WhatIf, TheStragglerEditNeedsRanksAndASlowerOne) {
  ReplayEdits ed;
  std::string basis;
  EXPECT_FALSE(fixEdit("straggler_at_median", nullptr, nullptr, ed, basis));
  auto l = testing::loadRun({testing::srcPath("testdata/kineto/fp32_naive_rank0.pt.trace.json.gz"),
                             testing::srcPath("testdata/kineto/fp32_naive_rank1.pt.trace.json.gz")});
  ASSERT_TRUE(fixEdit("straggler_at_median", nullptr, &l->run, ed, basis));
  ASSERT_EQ(ed.rank_compute_scale.size(), 2u);
  EXPECT_LT(std::min(ed.rank_compute_scale[0], ed.rank_compute_scale[1]), 1.0);
  EXPECT_NE(basis.find("peers' median"), std::string::npos);
  Replay base = replayRun(l->run), fixed = replayRun(l->run, ed);
  ASSERT_TRUE(fixed.available);
  EXPECT_LE(fixed.replayed_step_ns, base.replayed_step_ns + 1000);
}

TEST(WhatIf, EditsNeedTheRatesTheyUse) {
  ReplayEdits ed;
  std::string basis;
  EXPECT_FALSE(fixEdit("bf16", nullptr, nullptr, ed, basis));
  auto sheet = datasheetCeilings("NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(sheet.has_value());
  EXPECT_FALSE(fixEdit("pinned_copies", &*sheet, nullptr, ed, basis));  // a datasheet knows no pageable rate
  EXPECT_TRUE(fixEdit("bf16", &*sheet, nullptr, ed, basis));
  EXPECT_NEAR(ed.kernel_scale[static_cast<size_t>(KernelClass::kGemmFp32Simt)], 67.0 / 989.5, 1e-9);
  EXPECT_FALSE(fixEdit("sdpa", &*sheet, nullptr, ed, basis));
  EXPECT_EQ(fixOfFinding("launch.overhead"), "cuda_graphs");
  EXPECT_EQ(fixOfFinding("bottleneck.compute"), "");
}

}  // namespace
}  // namespace gpudoctor
