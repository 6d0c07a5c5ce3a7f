#include "diagnosis/fixes/fix_test_util.h"

namespace gpudoctor {
namespace {

TEST(MicroBatchFix, MergesTheAccumulatedMicroBatches) {
  ReplayEdits ed;
  EXPECT_FALSE(testing::applyFix(microBatchFix(), nullptr, nullptr, ed));  // no accumulation known
  RunAnalysis run;
  run.job.grad_accumulation_steps = 4;
  ASSERT_TRUE(testing::applyFix(microBatchFix(), nullptr, &run, ed));
  EXPECT_EQ(ed.micro_batch_merge, 4);
  EXPECT_GT(ed.merge_kernel_fixed_ns, 0);
}

}  // namespace
}  // namespace gpudoctor
