#include "diagnosis/rules/rule_test_util.h"

namespace gpudoctor {
namespace {
using namespace testing;

TEST(RuleMemoryPlanning, IsAConfigurationChoiceTheTraceCannotJudge) {
  auto r = run(memoryPlanningRule(), healthyFacts());
  EXPECT_TRUE(r.findings.empty());
  ASSERT_EQ(r.checklist.size(), 1u);
  EXPECT_EQ(r.checklist[0].area, "memory");
  EXPECT_EQ(r.checklist[0].status, CheckStatus::kUnknown);
  EXPECT_NE(r.checklist[0].evidence.find("gpudoctor plan"), std::string::npos);
}

}  // namespace
}  // namespace gpudoctor
