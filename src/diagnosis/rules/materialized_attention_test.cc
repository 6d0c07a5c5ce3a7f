#include "diagnosis/rules/rule_test_util.h"

namespace gpudoctor {
namespace {
using namespace testing;

TEST(RuleMaterializedAttention, UnfusedAttentionIsNamedWithItsShare) {
  Facts f = healthyFacts();
  f.class_ns[static_cast<size_t>(KernelClass::kAttentionUnfused)] = 40e6;  // 4 ms per step
  f.kernel_ns = 95e6;
  auto r = run(materializedAttentionRule(), f);
  const Finding* x = r.find("attention.materialized");
  ASSERT_NE(x, nullptr);
  EXPECT_DOUBLE_EQ(x->gain_ms_per_step, 3);
  EXPECT_NE(x->gain_basis.find("75%"), std::string::npos);
  EXPECT_EQ(r.checklist[0].status, CheckStatus::kFail);
}

TEST(RuleMaterializedAttention, FusedAttentionPasses) {
  Facts f = healthyFacts();
  f.class_ns[static_cast<size_t>(KernelClass::kAttentionFused)] = 20e6;
  auto r = run(materializedAttentionRule(), f);
  EXPECT_TRUE(r.findings.empty());
  EXPECT_EQ(r.checklist[0].status, CheckStatus::kPass);
  EXPECT_EQ(run(materializedAttentionRule(), healthyFacts()).checklist[0].status, CheckStatus::kUnknown);
}

}  // namespace
}  // namespace gpudoctor
