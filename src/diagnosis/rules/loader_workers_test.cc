#include "diagnosis/rules/rule_test_util.h"

namespace gpudoctor {
namespace {
using namespace testing;

TEST(RuleLoaderWorkers, SingleProcessLoaderFails) {
  Facts f = healthyFacts();
  f.mean.loader = 1e6;
  f.loader_in_process = true;
  auto r = run(loaderWorkersRule(), f);
  EXPECT_TRUE(r.findings.empty());
  ASSERT_EQ(r.checklist.size(), 1u);
  EXPECT_EQ(r.checklist[0].status, CheckStatus::kFail);
  f.loader_in_process = false;
  EXPECT_EQ(run(loaderWorkersRule(), f).checklist[0].status, CheckStatus::kPass);
  EXPECT_EQ(run(loaderWorkersRule(), healthyFacts()).checklist[0].status, CheckStatus::kUnknown);
}

}  // namespace
}  // namespace gpudoctor
