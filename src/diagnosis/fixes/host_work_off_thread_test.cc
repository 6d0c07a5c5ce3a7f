#include "diagnosis/fixes/fix_test_util.h"

namespace gpudoctor {
namespace {

TEST(HostWorkOffThreadFix, MovesTheHostsOwnWorkToFourWorkers) {
  ReplayEdits ed;
  EXPECT_FALSE(testing::applyFix(hostWorkOffThreadFix(), nullptr, nullptr, ed));  // nothing to move
  RunAnalysis run;
  run.ranks.emplace_back();
  run.ranks[0].host_work.per_step_ns = 8'000'000;
  ASSERT_TRUE(testing::applyFix(hostWorkOffThreadFix(), nullptr, &run, ed));
  EXPECT_TRUE(ed.host_work_off_thread);
  EXPECT_EQ(ed.loader_period_ns, 2'000'000);
  ReplayEdits slow_pool;
  slow_pool.loader_period_ns = 3'000'000;  // a slower pool keeps its period
  ASSERT_TRUE(testing::applyFix(hostWorkOffThreadFix(), nullptr, &run, slow_pool));
  EXPECT_EQ(slow_pool.loader_period_ns, 3'000'000);
}

}  // namespace
}  // namespace gpudoctor
