#include "diagnosis/fixes/fix_test_util.h"

namespace gpudoctor {
namespace {

TEST(PinnedCopiesFix, CopiesAtThePinnedRateAndOnlyTheirWaitsDropped) {
  ReplayEdits ed;
  const auto sheet = datasheetCeilings("NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(sheet.has_value());
  EXPECT_FALSE(testing::applyFix(pinnedCopiesFix(), &*sheet, nullptr, ed));  // a datasheet knows no pageable rate
  const Ceilings c = testing::h200();
  ASSERT_TRUE(testing::applyFix(pinnedCopiesFix(), &c, nullptr, ed));
  EXPECT_EQ(ed.pageable_htod_gbps, c.h2d_pinned_gbps);
  EXPECT_DOUBLE_EQ(ed.pageable_htod_scale, c.h2d_pageable_gbps / c.h2d_pinned_gbps);
  EXPECT_TRUE(ed.drop_copy_waits);
  EXPECT_FALSE(ed.drop_sync_waits);  // a loss.item() elsewhere still waits
}

}  // namespace
}  // namespace gpudoctor
