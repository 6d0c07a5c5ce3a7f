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

TEST(LoaderWorkersFix, ItsAlternativeQuadruplesAPoolThatSetsTheStep) {
  EXPECT_EQ(loaderWorkersFix().alternative(), "loader_workers_x4");
  RunAnalysis run;
  run.job.loader_workers = 3;
  ReplayEdits ed;
  ed.loader_period_ns = 12'000'000;
  std::string basis;
  ASSERT_TRUE(loaderWorkersX4Fix().edit({nullptr, &run}, ed, basis));
  EXPECT_EQ(ed.loader_period_ns, 3'000'000);
  EXPECT_NE(basis.find("(3 -> 12)"), std::string::npos) << basis;
}

TEST(LoaderWorkersFix, NoAlternativeForAnInProcessLoader) {
  ReplayEdits ed;  // no pool sets the step
  std::string basis;
  EXPECT_FALSE(loaderWorkersX4Fix().edit({}, ed, basis));
}

}  // namespace
}  // namespace gpudoctor
