#include "diagnosis/rules/rule_test_util.h"

namespace gpudoctor {
namespace {
using namespace testing;

// 4 ms a step of materialized attention (10 steps) in 9.5 ms of kernels.
Facts unfusedAttentionFacts() {
  Facts f = healthyFacts();
  f.class_ns[static_cast<size_t>(KernelClass::kAttentionUnfused)] = 40e6;
  f.kernel_ns = 95e6;
  return f;
}

TEST(RuleMaterializedAttention, UnfusedAttentionIsNamedWithItsShare) {
  Facts f = unfusedAttentionFacts();
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

// A job that calls scaled_dot_product_attention and gets its math backend (the lab's T5 on
// transformers' SDPA path: 12 of 18 calls a step) is not told to call it: it is told to find out why
// no fused backend takes the calls.
TEST(RuleMaterializedAttention, SdpasMathBackendIsNotHandWrittenAttention) {
  Facts f = unfusedAttentionFacts();
  f.job.sdpa_calls_per_step = 90;
  f.job.sdpa_math_calls_per_step = 60;
  auto r = run(materializedAttentionRule(), f);
  const Finding* x = r.find("attention.materialized");
  ASSERT_NE(x, nullptr);
  EXPECT_NE(x->title.find("math backend in 60 of 90 calls"), std::string::npos) << x->title;
  std::string fix;
  for (const auto& l : x->fix) fix += l + "\n";
  EXPECT_NE(fix.find("sdpa_kernel("), std::string::npos) << fix;
  EXPECT_EQ(fix.find("out = torch.nn.functional.scaled_dot_product_attention"), std::string::npos) << fix;
  EXPECT_DOUBLE_EQ(x->gain_ms_per_step, 3);  // the same kernels, the same bound
}

}  // namespace
}  // namespace gpudoctor
