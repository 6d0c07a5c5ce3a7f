#include "diagnosis/rules/rule_test_util.h"

namespace gpudoctor {
namespace {
using namespace testing;

TEST(RuleNcclSettings, CountsIgnoredWrongAndSlowSettings) {
  Facts f = healthyFacts();
  f.has_nccl_env = true;
  f.nccl_env = {{"NCCL_ALGO", "Ring", "env", EnvVerdict::kSlow, "one algorithm", "unset NCCL_ALGO"},
                {"NCCL_PROFILE", "1", "env", EnvVerdict::kIgnored, "unknown", ""},
                {"NCCL_DEBUG", "WARN", "env", EnvVerdict::kFine, "", ""}};
  auto r = run(ncclSettingsRule(), f);
  const Finding* x = r.find("nccl.settings");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->severity, Severity::kWarning);
  EXPECT_DOUBLE_EQ(evidenceOf(*x, "slow"), 1);
  EXPECT_DOUBLE_EQ(evidenceOf(*x, "ignored"), 1);
  ASSERT_EQ(x->fix.size(), 2u);
  EXPECT_EQ(x->fix[1], "NCCL_PROFILE=1  ->  see gpudoctor nccl env (ignored)");
  EXPECT_EQ(r.checklist[0].status, CheckStatus::kFail);
}

TEST(RuleNcclSettings, WithoutSettingsNothingIsJudged) {
  auto r = run(ncclSettingsRule(), healthyFacts());
  EXPECT_TRUE(r.findings.empty());
  EXPECT_EQ(r.checklist[0].status, CheckStatus::kUnknown);
}

}  // namespace
}  // namespace gpudoctor
