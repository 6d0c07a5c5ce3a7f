#include "diagnosis/fixes/fix_test_util.h"

namespace gpudoctor {
namespace {

TEST(NoHostSyncsFix, DropsEveryWaitInsideTheStep) {
  ReplayEdits ed;
  ASSERT_TRUE(testing::applyFix(noHostSyncsFix(), nullptr, nullptr, ed));
  EXPECT_TRUE(ed.drop_sync_waits);
}

}  // namespace
}  // namespace gpudoctor
