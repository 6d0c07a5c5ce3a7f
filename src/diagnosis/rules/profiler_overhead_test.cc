#include "diagnosis/rules/rule_test_util.h"

namespace gpudoctor {
namespace {
using namespace testing;

TEST(RuleProfilerOverhead, NamesTheCostlyOptionsSeen) {
  Facts f = healthyFacts();
  f.record_shapes = true;
  f.profile_memory = true;
  auto r = run(profilerOverheadRule(), f);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].title, "Profiler options add host overhead: record_shapes=True profile_memory=True ");
  EXPECT_EQ(r.findings[0].severity, Severity::kInfo);
}

TEST(RuleProfilerOverhead, PlainTraceHasNoFindingAndTheMonitoringItems) {
  auto r = run(profilerOverheadRule(), healthyFacts());
  EXPECT_TRUE(r.findings.empty());
  ASSERT_EQ(r.checklist.size(), 2u);
  EXPECT_EQ(r.checklist[0].evidence, "10 steps over 1 rank(s)");
  EXPECT_EQ(r.checklist[1].item, "Host CPU < 80% and live GPU metrics");
}

}  // namespace
}  // namespace gpudoctor
