#include "diagnosis/rules/rule_test_util.h"

namespace gpudoctor {
namespace {
using namespace testing;

TEST(RuleMemoryPeak, TheFirstRankAboveTheLimitIsCritical) {
  Facts f = healthyFacts();
  f.profile_memory = true;
  f.memory = {{0, 50ll << 30, 80ll << 30}, {1, 79ll << 30, 80ll << 30}, {2, 80ll << 30, 80ll << 30}};
  auto r = run(memoryPeakRule(), f);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].title, "Rank 1 peaks at 99% of GPU memory");
  EXPECT_EQ(r.findings[0].severity, Severity::kCritical);
  EXPECT_DOUBLE_EQ(evidenceOf(r.findings[0], "peak allocated"), 79);
  EXPECT_EQ(r.checklist[0].status, CheckStatus::kFail);
}

TEST(RuleMemoryPeak, RoomLeftPassesAndNoMemoryEventsIsUnknown) {
  Facts f = healthyFacts();
  f.profile_memory = true;
  f.memory = {{0, 50ll << 30, 80ll << 30}};
  EXPECT_EQ(run(memoryPeakRule(), f).checklist[0].status, CheckStatus::kPass);
  EXPECT_EQ(run(memoryPeakRule(), healthyFacts()).checklist[0].status, CheckStatus::kUnknown);
}

}  // namespace
}  // namespace gpudoctor
