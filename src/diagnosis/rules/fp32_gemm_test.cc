#include "diagnosis/fixes/bf16.h"
#include "diagnosis/rules/rule_test_util.h"
#include "diagnosis/what_if.h"

namespace gpudoctor {
namespace {
using namespace testing;

Facts withGemm(double fp32_ms, double bf16_ms, double tf32_ms = 0) {
  Facts f = healthyFacts();
  f.class_ns[static_cast<size_t>(KernelClass::kGemmFp32Simt)] = fp32_ms * 1e6 * f.steps;
  f.class_ns[static_cast<size_t>(KernelClass::kGemmBf16)] = bf16_ms * 1e6 * f.steps;
  f.class_ns[static_cast<size_t>(KernelClass::kGemmTf32)] = tf32_ms * 1e6 * f.steps;
  return f;
}

// The bound is what bf16 autocast can take at most: all of the FP32 GEMM time and a share of the
// elementwise kernels'.
TEST(RuleFp32Gemm, Fp32GemmsAreBoundedByAllTheirTime) {
  Facts f = withGemm(7, 0);
  f.class_ns[static_cast<size_t>(KernelClass::kElementwise)] = 2e6 * f.steps;
  auto r = run(fp32GemmRule(), f);
  const Finding* x = r.find("precision.fp32_gemm");
  ASSERT_NE(x, nullptr);
  EXPECT_DOUBLE_EQ(x->gain_ms_per_step, 7 + 2 * (1 - kBf16ElementwiseScaleMin));
  EXPECT_DOUBLE_EQ(evidenceOf(*x, "FP32 share of GEMM"), 100);
  EXPECT_NE(x->fix[0].find("bfloat16"), std::string::npos);
  EXPECT_EQ(r.checklist[0].status, CheckStatus::kFail);
}

TEST(RuleFp32Gemm, OldGpuGetsTheCautiousFactorAndFp16Advice) {
  Facts f = withGemm(7, 0);
  f.compute_major = 7;
  auto r = run(fp32GemmRule(), f);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_DOUBLE_EQ(r.findings[0].gain_ms_per_step, 7);
  EXPECT_NE(r.findings[0].fix[0].find("GradScaler"), std::string::npos);
  // No bf16 or TF32 tensor cores before Ampere: the bound is what fp16 autocast takes, at the FP16 rate.
  const std::string& basis = r.findings[0].gain_basis;
  EXPECT_NE(basis.find("fp16 autocast"), std::string::npos) << basis;
  EXPECT_EQ(basis.find("bf16"), std::string::npos) << basis;
  EXPECT_EQ(basis.find("TF32 alone"), std::string::npos) << basis;
}

// Convolutions in TF32 (cuDNN's default) are on tensor cores at half the BF16 rate: the bf16 advice
// stands, titled for TF32, with no TF32 line in the fix; before Ampere there is no TF32 to see.
TEST(RuleFp32Gemm, Tf32LedGemmsGetTheBf16AdviceTitledForTf32) {
  Facts f = withGemm(0.2, 0, 9);
  auto r = run(fp32GemmRule(), f);
  ASSERT_EQ(r.findings.size(), 1u);
  const Finding* x = &r.findings[0];
  EXPECT_NE(x->title.find("in TF32"), std::string::npos) << x->title;
  EXPECT_DOUBLE_EQ(x->gain_ms_per_step, 9.2);
  EXPECT_EQ(x->fix.size(), 2u);
  EXPECT_NE(x->gain_basis.find("twice the TF32 rate"), std::string::npos) << x->gain_basis;
  EXPECT_NE(r.checklist[0].evidence.find("TF32 98%"), std::string::npos) << r.checklist[0].evidence;
  f.compute_major = -1;  // a GPU of unknown generation: TF32 kernels say it is Ampere or newer
  EXPECT_NE(run(fp32GemmRule(), f).find("precision.fp32_gemm"), nullptr);
  f.compute_major = 7;
  EXPECT_TRUE(run(fp32GemmRule(), f).findings.empty());
  // BF16-led with FP32 and TF32 each under the threshold (together over it) stays quiet.
  EXPECT_TRUE(run(fp32GemmRule(), withGemm(0.8, 9, 0.8)).findings.empty());
}

TEST(RuleFp32Gemm, MostlyBf16PassesAndNoGemmIsNotMeasurable) {
  auto r = run(fp32GemmRule(), withGemm(0.5, 9));
  EXPECT_TRUE(r.findings.empty());
  EXPECT_EQ(r.checklist[0].status, CheckStatus::kPass);
  auto none = run(fp32GemmRule(), healthyFacts());
  EXPECT_EQ(none.checklist[0].status, CheckStatus::kUnknown);
}

}  // namespace
}  // namespace gpudoctor
