#include "diagnosis/fixes/fix_test_util.h"

namespace gpudoctor {
namespace {

TEST(SdpaFix, FusesTheAttentionWithoutRates) {
  ReplayEdits ed;
  ASSERT_TRUE(testing::applyFix(sdpaFix(), nullptr, nullptr, ed));  // the GEMMs' math is kept as traced
  EXPECT_TRUE(ed.fused_attention);
  EXPECT_EQ(ed.attention_gemm_scale, 1.0);
}

}  // namespace
}  // namespace gpudoctor
