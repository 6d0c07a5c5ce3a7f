#include "diagnosis/fixes/fix_test_util.h"

namespace gpudoctor {
namespace {

TEST(LoaderWorkersFix, APoolThatSetsTheStepDoublesItsWorkers) {
  ReplayEdits ed;
  ed.loader_period_ns = 10'000'000;  // the un-profiled edits found the pool limiting
  ASSERT_TRUE(testing::applyFix(loaderWorkersFix(), nullptr, nullptr, ed));
  EXPECT_EQ(ed.loader_period_ns, 5'000'000);
  EXPECT_FALSE(ed.loader_off_thread);
}

TEST(LoaderWorkersFix, AnInProcessLoaderMovesToWorkers) {
  RunAnalysis run;
  run.ranks.emplace_back();
  run.ranks[0].total.dataloader_ns = 80'000'000;
  run.ranks[0].steps.resize(2);  // 40 ms of loading a step
  ReplayEdits ed;
  ASSERT_TRUE(testing::applyFix(loaderWorkersFix(), nullptr, &run, ed));
  EXPECT_TRUE(ed.loader_off_thread);
  EXPECT_EQ(ed.loader_period_ns, 5'000'000);  // 8 workers
}

}  // namespace
}  // namespace gpudoctor
