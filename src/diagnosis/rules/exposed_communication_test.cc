#include "diagnosis/rules/rule_test_util.h"

namespace gpudoctor {
namespace {
using namespace testing;

TEST(RuleExposedCommunication, AboveTheGuideShare) {
  Facts f = healthyFacts();
  f.ranks = 2;
  f.mean.comm = 4e6;
  f.mean.comm_exposed = 3e6;
  auto r = run(exposedCommunicationRule(), f);
  const Finding* x = r.find("communication.exposed");
  ASSERT_NE(x, nullptr);
  EXPECT_DOUBLE_EQ(x->gain_ms_per_step, 3);
  EXPECT_DOUBLE_EQ(evidenceOf(*x, "overlapped"), 1);
  EXPECT_EQ(r.checklist[0].status, CheckStatus::kFail);
}

TEST(RuleExposedCommunication, HiddenCommunicationPassesAndOneRankIsUnknown) {
  Facts f = healthyFacts();
  f.ranks = 2;
  f.mean.comm = 4e6;
  f.mean.comm_exposed = 0.5e6;
  auto r = run(exposedCommunicationRule(), f);
  EXPECT_TRUE(r.findings.empty());
  EXPECT_EQ(r.checklist[0].status, CheckStatus::kPass);
  EXPECT_EQ(run(exposedCommunicationRule(), healthyFacts()).checklist[0].status, CheckStatus::kUnknown);
}

}  // namespace
}  // namespace gpudoctor
