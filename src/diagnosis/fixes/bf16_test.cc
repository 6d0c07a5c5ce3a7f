#include "diagnosis/fixes/bf16.h"

#include "diagnosis/fixes/fix_test_util.h"

namespace gpudoctor {
namespace {

TEST(Bf16Fix, ScalesFp32AndTf32GemmsToTheBf16RateOfTheCeilings) {
  const Fix& f = bf16Fix();
  ReplayEdits ed;
  EXPECT_FALSE(testing::applyFix(f, nullptr, nullptr, ed));  // no rates, no edit
  const Ceilings c = testing::h200();
  ASSERT_TRUE(testing::applyFix(f, &c, nullptr, ed));
  const double bf16 = c.peak(GemmPrecision::kBf16) * kBf16GemmEfficiency;
  EXPECT_DOUBLE_EQ(ed.kernel_scale[static_cast<size_t>(KernelClass::kGemmFp32Simt)],
                   c.peak(GemmPrecision::kFp32) / bf16 + kAutocastCastShare);
  EXPECT_DOUBLE_EQ(ed.kernel_scale[static_cast<size_t>(KernelClass::kGemmTf32)],
                   c.peak(GemmPrecision::kTf32) / bf16 + kAutocastCastShare);
  EXPECT_EQ(ed.kernel_floor_ns[static_cast<size_t>(KernelClass::kGemmFp32Simt)], kBf16GemmFloorNs);
  EXPECT_EQ(ed.kernel_scale[static_cast<size_t>(KernelClass::kElementwise)], kBf16ElementwiseScale);
  EXPECT_EQ(ed.kernel_scale[static_cast<size_t>(KernelClass::kOptimizer)], 1.0);  // FP32 master weights
  EXPECT_EQ(ed.kernel_scale[static_cast<size_t>(KernelClass::kGemmBf16)], 1.0);   // already BF16
  EXPECT_EQ(ed.autocast_cast_ns, kAutocastCastHostNs);
  EXPECT_LT(ed.fused_attention_fp32_scale, 1.0);
}

}  // namespace
}  // namespace gpudoctor
