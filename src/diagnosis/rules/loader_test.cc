#include "diagnosis/rules/rule_test_util.h"

namespace gpudoctor {
namespace {
using namespace testing;

TEST(RuleLoader, InProcessLoaderOnTheCriticalPath) {
  Facts f = healthyFacts();
  f.loader_in_process = true;
  f.mean.loader = 3e6;
  f.mean.idle_loader = 2e6;
  auto r = run(loaderRule(), f);
  const Finding* x = r.find("input.loader_on_critical_path");
  ASSERT_NE(x, nullptr);
  EXPECT_DOUBLE_EQ(x->gain_ms_per_step, 2);
  EXPECT_NE(x->title.find("num_workers=0"), std::string::npos);
  EXPECT_EQ(r.checklist[0].status, CheckStatus::kFail);
}

TEST(RuleLoader, HiddenLoaderSaysWhenItStopsBeingHidden) {
  Facts f = healthyFacts();
  f.loader_in_process = true;
  f.mean.loader = 2e6;
  auto r = run(loaderRule(), f);
  const Finding* x = r.find("input.loader_hidden");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->severity, Severity::kOk);
  EXPECT_NE(x->explanation.find("4.8x faster"), std::string::npos);  // 9.5 ms busy / 2 ms loader
  EXPECT_EQ(r.checklist[0].status, CheckStatus::kPass);
}

TEST(RuleLoader, WorkersBelowTheIoWaitLimitPass) {
  Facts f = healthyFacts();
  f.mean.loader = 1e6;
  f.mean.idle_loader = 0.5e6;
  auto r = run(loaderRule(), f);
  EXPECT_TRUE(r.findings.empty());
  EXPECT_EQ(r.checklist[0].status, CheckStatus::kPass);
  EXPECT_EQ(run(loaderRule(), healthyFacts()).checklist[0].status, CheckStatus::kUnknown);
}

}  // namespace
}  // namespace gpudoctor
