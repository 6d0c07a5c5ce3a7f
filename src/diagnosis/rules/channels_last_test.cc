#include "diagnosis/rules/rule_test_util.h"

#include "analysis/run_test_util.h"
#include "diagnosis/diagnosis.h"

namespace gpudoctor {
namespace {
using namespace testing;

TEST(RuleChannelsLast, TransposesAboveTheLimitAreNamed) {
  Facts f = healthyFacts();
  EXPECT_TRUE(run(channelsLastRule(), f).findings.empty());
  f.layout_transpose_ns = 10 * 1.5e6;  // 1.5 ms a step of a 10 ms step
  auto r = run(channelsLastRule(), f);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].id, "layout.channels_last");
  EXPECT_DOUBLE_EQ(r.findings[0].gain_ms_per_step, 1.5);
  // The bound holds the NCHW batch norms and the convolutions too, which channels_last moves to other
  // kernels (the lab's resnext50: batch norms x0.69, its NCHW-only grouped convolutions 4.15 -> 0.06 ms).
  f.nchw_batch_norm_ns = 10 * 2e6;
  f.convolution_ns = 10 * 3e6;
  r = run(channelsLastRule(), f);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_DOUBLE_EQ(r.findings[0].gain_ms_per_step, 6.5);
  EXPECT_NE(r.findings[0].fix[0].find("channels_last"), std::string::npos);
}

// The ResNet of the validation set: NCHW in FP32/TF32 and in bf16 (channels_last then measured
// 1.57x faster than bf16 alone), and not once it runs channels_last.
TEST(RuleChannelsLast, OnTheResNetTraces) {
  auto has = [](const std::string& trace) {
    auto l = loadRun({srcPath("testdata/whatif/" + trace + ".pt.trace.json.gz")});
    Diagnosis d = diagnose(l->run, Thresholds::defaults());
    for (const auto& f : d.findings)
      if (f.id == "layout.channels_last") return true;
    return false;
  };
  EXPECT_TRUE(has("resnet_fp32__base"));
  EXPECT_TRUE(has("resnet_fp32__bf16"));
  EXPECT_FALSE(has("resnet_fp32__bf16_channels_last"));
  EXPECT_FALSE(has("gpt_fp32_naive__base"));
}

}  // namespace
}  // namespace gpudoctor
