#include "diagnosis/rules/rule_test_util.h"

namespace gpudoctor {
namespace {
using namespace testing;

TEST(RuleBottleneck, ComputeHeadlineIsInfoWithoutGain) {
  auto r = run(bottleneckRule(), healthyFacts());
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].id, "bottleneck.compute");
  EXPECT_EQ(r.findings[0].severity, Severity::kInfo);
  EXPECT_EQ(r.findings[0].gain_ms_per_step, 0);
  EXPECT_NE(r.findings[0].explanation.find("compute 95.0%"), std::string::npos);
}

TEST(RuleBottleneck, HostLaunchHeadlineCountsTheWholeCategory) {
  Facts f = healthyFacts();
  f.mean.compute = f.mean.busy = 3e6;
  f.mean.idle_host = 6e6;
  f.mean.idle_other = 1e6;
  auto r = run(bottleneckRule(), f);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].id, "bottleneck.host_launch");
  EXPECT_DOUBLE_EQ(r.findings[0].gain_ms_per_step, 6);
  EXPECT_DOUBLE_EQ(r.findings[0].gain_share, 0.6);
  EXPECT_EQ(r.findings[0].severity, Severity::kCritical);
  EXPECT_FALSE(r.findings[0].fix.empty());
}

TEST(RuleBottleneck, LoaderIdleCountsAsInputNotHost) {
  Facts f = healthyFacts();
  f.mean.compute = f.mean.busy = 3e6;
  f.mean.idle_host = 6e6;
  f.mean.idle_host_loader = 5e6;
  auto r = run(bottleneckRule(), f);
  EXPECT_EQ(r.findings[0].id, "bottleneck.input");
}

}  // namespace
}  // namespace gpudoctor
