#include "diagnosis/diagnosis.h"
#include "diagnosis/rules/rule_test_util.h"

namespace gpudoctor {
namespace {
using namespace testing;

Facts withStraggler(double share) {
  Facts f = healthyFacts();
  f.ranks = 4;
  f.straggler = {true, 3, share, 2e6, 1.5e6, 0.5e6, "rank 3 arrives last"};
  return f;
}

TEST(RuleStraggler, ARankLastMostOfTheTimeIsNamed) {
  auto r = run(stragglerRule(), withStraggler(0.9));
  const Finding* x = r.find("communication.straggler");
  ASSERT_NE(x, nullptr);
  EXPECT_DOUBLE_EQ(x->gain_ms_per_step, 2);
  EXPECT_DOUBLE_EQ(evidenceOf(*x, "rank 3 GPU idle (host launch)"), 1.5);
  EXPECT_NE(x->fix[0].find("--rank 3"), std::string::npos);
  EXPECT_EQ(r.checklist[0].status, CheckStatus::kFail);
}

TEST(RuleStraggler, BelowTheShareOrUnmatchedIsNot) {
  auto r = run(stragglerRule(), withStraggler(0.5));
  EXPECT_TRUE(r.findings.empty());
  EXPECT_EQ(r.checklist[0].status, CheckStatus::kPass);
  Facts f = withStraggler(0.9);
  f.straggler.matched = false;
  EXPECT_EQ(run(stragglerRule(), f).checklist[0].status, CheckStatus::kUnknown);
}

TEST(RuleStraggler, ItsThresholdsConfigureTheAnalysis) {
  Thresholds t = Thresholds::defaults();
  ASSERT_TRUE(t.loadTomlText("straggler_share_min = 0.7\nstraggler_wait_min = 0.2", "t.toml").ok());
  AnalysisOptions o;
  configureAnalysis(t, o);
  EXPECT_DOUBLE_EQ(o.straggler_share_min, 0.7);
  EXPECT_DOUBLE_EQ(o.straggler_wait_min, 0.2);
}

}  // namespace
}  // namespace gpudoctor
