#include "diagnosis/rules/rule_test_util.h"

namespace gpudoctor {
namespace {
using namespace testing;

// A collective size of `bytes` called `count` times (kind and dtype unknown).
CollectiveSize sized(int64_t bytes, int64_t count) {
  CollectiveSize c;
  c.bytes = bytes;
  c.count = count;
  return c;
}

TEST(RuleSmallCollectives, ManySmallCollectivesPerStepAdviseBucketing) {
  Facts f = healthyFacts();
  f.mean.comm = 1e6;
  f.collectives = {sized(4096, 300), sized(64 << 20, 10), sized(0, 500)};  // 30 small per step; unknown sizes ignored
  f.collective_groups = 3;
  auto r = run(smallCollectivesRule(), f);
  const Finding* x = r.find("communication.small_collectives");
  ASSERT_NE(x, nullptr);
  EXPECT_DOUBLE_EQ(evidenceOf(*x, "small collectives"), 30);
  EXPECT_EQ(x->severity, Severity::kWarning);
  EXPECT_EQ(r.checklist[0].status, CheckStatus::kFail);
  EXPECT_EQ(r.checklist[0].evidence, "3 collective groups in the trace");
}

TEST(RuleSmallCollectives, FewOrLargeCollectivesPass) {
  Facts f = healthyFacts();
  f.mean.comm = 1e6;
  f.collectives = {sized(4096, 50), sized(64 << 20, 1000)};
  auto r = run(smallCollectivesRule(), f);
  EXPECT_TRUE(r.findings.empty());
  EXPECT_EQ(r.checklist[0].status, CheckStatus::kPass);
}

}  // namespace
}  // namespace gpudoctor
