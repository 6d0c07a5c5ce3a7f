#include "diagnosis/fixes/fix_test_util.h"

namespace gpudoctor {
namespace {

TEST(PinnedCopiesFix, CopiesAtThePinnedRateAndOnlyTheirWaitsDropped) {
  // A datasheet knows the link's pinned rate, not the host's pageable one: copies of known bytes run
  // at the link's rate, the others keep their time.
  ReplayEdits sheet_ed;
  const auto sheet = datasheetCeilings("NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(sheet.has_value());
  ASSERT_TRUE(testing::applyFix(pinnedCopiesFix(), &*sheet, nullptr, sheet_ed));
  EXPECT_EQ(sheet_ed.pageable_htod_gbps, sheet->h2d_pinned_gbps);
  EXPECT_DOUBLE_EQ(sheet_ed.pageable_htod_scale, 1.0);
  EXPECT_TRUE(sheet_ed.drop_copy_waits);
  ReplayEdits ed;
  const Ceilings c = testing::h200();
  ASSERT_TRUE(testing::applyFix(pinnedCopiesFix(), &c, nullptr, ed));
  EXPECT_EQ(ed.pageable_htod_gbps, c.h2d_pinned_gbps);
  EXPECT_DOUBLE_EQ(ed.pageable_htod_scale, c.h2d_pageable_gbps / c.h2d_pinned_gbps);
  EXPECT_TRUE(ed.drop_copy_waits);
  EXPECT_FALSE(ed.drop_sync_waits);  // a loss.item() elsewhere still waits
}

}  // namespace
}  // namespace gpudoctor
