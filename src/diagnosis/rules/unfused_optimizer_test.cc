#include "diagnosis/rules/rule_test_util.h"

namespace gpudoctor {
namespace {
using namespace testing;

TEST(RuleUnfusedOptimizer, ForeachKernelsGainTheHostStepLessHalfTheKernels) {
  Facts f = healthyFacts();
  f.class_ns[static_cast<size_t>(KernelClass::kOptimizer)] = 20e6;  // 2 ms per step
  f.mean.optimizer = 3e6;
  auto r = run(unfusedOptimizerRule(), f);
  ASSERT_NE(r.find("optimizer.unfused"), nullptr);
  EXPECT_DOUBLE_EQ(r.findings[0].gain_ms_per_step, 2);
  EXPECT_EQ(r.checklist[0].status, CheckStatus::kFail);
  EXPECT_EQ(r.checklist[0].evidence, "optimizer kernels are foreach/per-tensor");
}

TEST(RuleUnfusedOptimizer, FusedOptimizerIsNeverAdvised) {
  Facts f = healthyFacts();
  f.class_ns[static_cast<size_t>(KernelClass::kOptimizer)] = 20e6;
  f.fused_optimizer = true;
  auto r = run(unfusedOptimizerRule(), f);
  EXPECT_TRUE(r.findings.empty());
  EXPECT_EQ(r.checklist[0].status, CheckStatus::kPass);
}

}  // namespace
}  // namespace gpudoctor
