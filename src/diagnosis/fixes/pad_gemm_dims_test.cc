#include "diagnosis/fixes/pad_gemm_dims.h"

#include "analysis/replay/replay.h"
#include "diagnosis/fixes/fix_test_util.h"

namespace gpudoctor {
namespace {

// A GPU-bound step of three GEMMs on one stream: an aligned one (nvjet), a 2-byte-aligned fallback
// (GPT-2's LM head) and a 4-byte one (BERT's), each 1 ms, launched ahead of the GPU and waited for. Padding
// takes from the two fallbacks only, each at its alignment's share.
TEST(PadGemmDimsFix, OnlyTheMisalignedGemmsRunAtTheAlignedRate) {
  const std::vector<const char*> names = {
      "nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_TNT",
      "void cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_128x128_tn_align1>("
      "cutlass_75_tensorop_bf16_s1688gemm_bf16_128x128_tn_align1::Params)",
      "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_256x128_64x3_tn_align2>("
      "cutlass_80_tensorop_bf16_s16816gemm_bf16_256x128_64x3_tn_align2::Params)"};
  std::vector<RankTrace> v = testing::gpuBoundSteps(names);
  auto run = analyzeRun(v, {});
  ASSERT_TRUE(run.ok());
  ReplayEdits ed;
  ASSERT_TRUE(testing::applyFix(padGemmDimsFix(), nullptr, &run.value(), ed));
  EXPECT_EQ(ed.misaligned_gemm_scale, kPaddedGemmShare);
  ReplayModel m(run.value());
  const Replay before = m.replay(), after = m.replay(ed);
  ASSERT_TRUE(after.available) << after.reason;
  // The GPU's work per step: 3 ms, then 1 ms and the two fallbacks at their shares.
  EXPECT_NEAR(before.replayed.busy_ns, 3e6, 1e3);
  EXPECT_NEAR(after.replayed.busy_ns, 1e6 * (1 + kPaddedGemmShare[0] + kPaddedGemmShare[1]), 1e3);
}

}  // namespace
}  // namespace gpudoctor
