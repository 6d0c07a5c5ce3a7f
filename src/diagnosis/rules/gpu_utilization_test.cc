#include "diagnosis/rules/rule_test_util.h"

namespace gpudoctor {
namespace {
using namespace testing;

TEST(RuleGpuUtilization, PassesAboveAndFailsBelowTheGuideLimit) {
  auto ok = run(gpuUtilizationRule(), healthyFacts());
  EXPECT_TRUE(ok.findings.empty());
  ASSERT_EQ(ok.checklist.size(), 1u);
  EXPECT_EQ(ok.checklist[0].status, CheckStatus::kPass);
  EXPECT_EQ(ok.checklist[0].item, "GPU utilization > 90%");
  Facts f = healthyFacts();
  f.mean.busy = 8e6;
  auto low = run(gpuUtilizationRule(), f);
  EXPECT_EQ(low.checklist[0].status, CheckStatus::kFail);
  EXPECT_EQ(low.checklist[0].evidence, "GPU busy 80.0% of the step");
}

TEST(RuleGpuUtilization, ThresholdOverrideMovesTheVerdict) {
  Facts f = healthyFacts();
  f.mean.busy = 8e6;
  Thresholds t = tableOf(gpuUtilizationRule());
  ASSERT_TRUE(t.loadTomlText("gpu_util_min = 0.75", "t.toml").ok());
  auto r = run(gpuUtilizationRule(), f, &t);
  EXPECT_EQ(r.checklist[0].status, CheckStatus::kPass);
}

}  // namespace
}  // namespace gpudoctor
