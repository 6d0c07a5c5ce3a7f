#include "diagnosis/rules/rule_test_util.h"

namespace gpudoctor {
namespace {
using namespace testing;

TEST(RuleFp16GradScaler, Fp16GemmsGetTheScalerAdviceAsInfo) {
  Facts f = healthyFacts();
  f.class_ns[static_cast<size_t>(KernelClass::kGemmFp16)] = 5e6;
  f.class_ns[static_cast<size_t>(KernelClass::kGemmBf16)] = 5e6;
  auto r = run(fp16GradScalerRule(), f);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].severity, Severity::kInfo);
  EXPECT_DOUBLE_EQ(evidenceOf(r.findings[0], "FP16 share of GEMM"), 50);
}

TEST(RuleFp16GradScaler, AFewFp16GemmsAreNotWorthIt) {
  Facts f = healthyFacts();
  f.class_ns[static_cast<size_t>(KernelClass::kGemmFp16)] = 0.4e6;
  f.class_ns[static_cast<size_t>(KernelClass::kGemmBf16)] = 9.6e6;
  EXPECT_TRUE(run(fp16GradScalerRule(), f).findings.empty());
}

}  // namespace
}  // namespace gpudoctor
