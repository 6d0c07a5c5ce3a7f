#include "diagnosis/rules/rule_test_util.h"

namespace gpudoctor {
namespace {
using namespace testing;

TEST(RuleBlockingSync, SyncIdleAboveTheLimitIsNamed) {
  Facts f = healthyFacts();
  f.mean.busy = f.mean.compute = 4e6;
  f.mean.idle_sync = 5e6;
  f.mean.sync = 4.5e6;
  auto r = run(blockingSyncRule(), f);
  const Finding* x = r.find("sync.blocking");
  ASSERT_NE(x, nullptr);
  EXPECT_DOUBLE_EQ(x->gain_ms_per_step, 6);  // the GPU's idle per step: 10 ms less its 4 ms of work
  EXPECT_DOUBLE_EQ(evidenceOf(*x, "host blocked in sync calls"), 4.5);
  EXPECT_FALSE(x->fix.empty());
}

TEST(RuleBlockingSync, TheLoadersOwnWaitsAreNotCounted) {
  Facts f = healthyFacts();
  f.mean.idle_sync = 5e6;
  f.mean.idle_sync_loader = 4.8e6;
  EXPECT_TRUE(run(blockingSyncRule(), f).findings.empty());
}

}  // namespace
}  // namespace gpudoctor
