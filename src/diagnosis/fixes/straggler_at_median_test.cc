#include "diagnosis/fixes/fix_test_util.h"

namespace gpudoctor {
namespace {

TEST(StragglerAtMedianFix, NeedsSeveralRanks) {
  ReplayEdits ed;
  EXPECT_FALSE(testing::applyFix(stragglerAtMedianFix(), nullptr, nullptr, ed));
  RunAnalysis one;
  one.ranks.emplace_back();
  EXPECT_FALSE(testing::applyFix(stragglerAtMedianFix(), nullptr, &one, ed));
  EXPECT_TRUE(ed.rank_compute_scale.empty());  // the two-rank case: what_if_test's straggler traces
}

}  // namespace
}  // namespace gpudoctor
