#include "analysis/replay/replay.h"
#include "diagnosis/fixes/fix_test_util.h"

namespace gpudoctor {
namespace {

TEST(SdpaFix, FusesTheAttentionWithoutRates) {
  ReplayEdits ed;
  ASSERT_TRUE(testing::applyFix(sdpaFix(), nullptr, nullptr, ed));  // the GEMMs' math is kept as traced
  EXPECT_TRUE(ed.fused_attention);
  EXPECT_EQ(ed.attention_gemm_scale, 1.0);
}

// A host-bound materialized attention: bmm, softmax, bmm, each a 20 us operator launching one 1 us
// kernel (real names: the lab's bf16 OPT trace), back to back. The fused kernel replaces what runs between
// the two GEMMs' operators, not only the softmax's launch: the step loses all 20 us of the softmax's operator.
TEST(SdpaFix, TheScoreMatrixsOperatorsHostWorkGoesWithTheirKernels) {
  TraceBuilder b;
  int64_t t = 1000, corr = 1;
  const char* bmm = "nvjet_sm90_tst_128x128_64x6_2x1_v_bz_NNT";
  const char* softmax =
      "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, false>("
      "float*, float const*, int, int, int, bool const*, int, bool)";
  for (int s = 0; s < 4; ++s) {
    const int64_t begin = t;
    for (auto [op, kernel] : {std::pair{"aten::bmm", bmm}, {"aten::_softmax", softmax}, {"aten::bmm", bmm}}) {
      b.add(EventKind::kHostOp, TraceBuilder::kHost, op, t, t + 20'000);
      b.t.events.back().external_id = corr;
      b.launch(corr, t + 5'000, t + 10'000, EventKind::kKernel, TraceBuilder::kStream7, kernel, t + 12'000, t + 13'000);
      b.t.events.back().external_id = corr;
      ++corr;
      t += 20'000;
    }
    b.step(s + 1, begin, t);
  }
  std::vector<RankTrace> v;
  v.push_back(b.done());
  auto run = analyzeRun(v, {});
  ASSERT_TRUE(run.ok());
  ReplayEdits ed;
  ASSERT_TRUE(testing::applyFix(sdpaFix(), nullptr, &run.value(), ed));
  ReplayModel m(run.value());
  const Replay before = m.replay(), after = m.replay(ed);
  ASSERT_TRUE(before.available && after.available) << after.reason;
  EXPECT_NEAR(before.replayed_step_ns, 60'000, 500);
  EXPECT_NEAR(after.replayed_step_ns, 40'000, 500);
}

}  // namespace
}  // namespace gpudoctor
