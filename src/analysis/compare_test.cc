// compare's verdict on the un-profiled basis against the physical bounds of each side's step: at least
// the GPU's busy time, at most the traced step.
#include <gtest/gtest.h>

#include "analysis/compare.h"

namespace gpudoctor {
namespace {

// One rank, `n` steps of `wall_ms` of which `busy_ms` the GPU computes (the rest host idle), with an
// un-profiled estimate of `estimate_ms`.
RunSummary side(double wall_ms, double busy_ms, double estimate_ms, int n = 5) {
  RunSummary s;
  RankSummary r;
  r.rank = 0;
  for (int i = 0; i < n; ++i) {
    StepFigures f;
    f.number = i + 1;
    f.wall = static_cast<int64_t>(wall_ms * 1e6);
    f.compute = static_cast<int64_t>(busy_ms * 1e6);
    f.idle_host = f.wall - f.compute;
    r.steps.push_back(f);
  }
  s.ranks.push_back(r);
  s.unprofiled_step_ns = estimate_ms * 1e6;
  s.traced_step_ns = wall_ms * 1e6;
  return s;
}

// The base's GPU alone is busy 30 ms a step, longer than the whole new step (20 ms traced): faster,
// although the estimates (31 against 28 ms, with a large profiler share on the base) are within
// their band.
TEST(CompareVerdict, ABaseBusierThanTheWholeNewStepIsFaster) {
  auto r = compareRuns(side(90, 30, 31), side(20, 18, 28));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NEAR(r.value().base_busy_ns, 30e6, 1);
  EXPECT_NEAR(r.value().new_traced_ns, 20e6, 1);
  EXPECT_GT(r.value().speedup_low, 1.0);
  EXPECT_LE(r.value().speedup_low, r.value().speedup);
  EXPECT_EQ(r.value().verdict, "faster");
  // Without the base's busy time (an older saved document) the band alone decides: no change.
  RunSummary base = side(90, 30, 31);
  for (auto& f : base.ranks[0].steps) f.compute = 0, f.idle_host = f.wall;
  auto without = compareRuns(base, side(20, 18, 28));
  ASSERT_TRUE(without.ok());
  EXPECT_EQ(without.value().verdict, "no change beyond noise");
  // ... and the base's estimate, 66 % of its traced step taken away, is what leaves it undecided: a
  // note says so. The verdict of "faster" above needs none.
  auto noted = [](const CompareResult& c) {
    for (const auto& n : c.notes)
      if (n.find("the base side's un-profiled estimate takes 66 % of its traced step away") != std::string::npos)
        return true;
    return false;
  };
  EXPECT_TRUE(noted(without.value()));
  EXPECT_FALSE(noted(r.value()));
}

// The mirror: the new GPU alone is busier than the whole base step: slower, and the range's top
// stays under the traced base over the new busy time.
TEST(CompareVerdict, ANewStepBusierThanTheWholeBaseIsSlower) {
  auto r = compareRuns(side(20, 18, 28), side(90, 30, 31));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_LT(r.value().speedup_high, 1.0);
  EXPECT_GE(r.value().speedup_high, r.value().speedup);
  EXPECT_EQ(r.value().verdict, "slower");
}

// The bounds never widen the band's range: where the estimates are far apart the band decides.
TEST(CompareVerdict, TheBoundsOnlyNarrowTheRange) {
  auto r = compareRuns(side(40, 10, 40), side(20, 5, 10));
  ASSERT_TRUE(r.ok());
  const auto& c = r.value();
  EXPECT_NEAR(c.speedup, 4.0, 1e-9);
  EXPECT_NEAR(c.speedup_low, c.speedup / (1 + c.band), 1e-9);
  EXPECT_LE(c.speedup_high, c.speedup * (1 + c.band) + 1e-9);
  EXPECT_EQ(c.verdict, "faster");
}

}  // namespace
}  // namespace gpudoctor
