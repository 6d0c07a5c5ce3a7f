#include "diagnosis/fixes/no_checkpointing.h"

#include "diagnosis/fixes/fix_test_util.h"

namespace gpudoctor {
namespace {

TEST(NoCheckpointingFix, NeedsCheckpointedRegionsInTheRun) {
  ReplayEdits ed;
  ASSERT_TRUE(testing::applyFix(noCheckpointingFix(), nullptr, nullptr, ed));  // the replay finds them itself
  EXPECT_TRUE(ed.drop_recompute);
  EXPECT_EQ(ed.checkpoint_block_ns, 0);
  RunAnalysis none;
  none.ranks.emplace_back();
  ReplayEdits off;
  EXPECT_FALSE(testing::applyFix(noCheckpointingFix(), nullptr, &none, off));
}

}  // namespace
}  // namespace gpudoctor
