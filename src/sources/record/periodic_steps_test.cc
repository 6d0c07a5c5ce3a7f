#include "sources/record/periodic_steps.h"

#include <gtest/gtest.h>

#include <random>

namespace gpudoctor {
namespace {

// A sequence of launches 1 us long and 1 us apart, with a longer host gap before each step's first.
std::vector<LaunchMark> seq(const std::vector<uint32_t>& prefix, const std::vector<uint32_t>& step, int steps,
                            int64_t step_gap_ns = 50'000) {
  std::vector<LaunchMark> v;
  int64_t t = 0;
  for (uint32_t k : prefix) v.push_back({t, t + 1000, k}), t += 2000;
  for (int s = 0; s < steps; ++s)
    for (size_t i = 0; i < step.size(); ++i) {
      if (i == 0) t += step_gap_ns;
      v.push_back({t, t + 1000, step[i]});
      t += 2000;
    }
  return v;
}

TEST(PeriodicSteps, FindsThePeriodAndStartsStepsAfterTheLongestGap) {
  // Every name repeats inside the step (the CUDA program's pattern: 3 kernels x 10, then a graph).
  std::vector<uint32_t> step;
  for (int i = 0; i < 30; ++i) step.push_back(1 + i % 3);
  step.push_back(9);
  auto v = seq({}, step, 20);
  PeriodicSteps p = findPeriodicSteps(v);
  ASSERT_EQ(p.period, 31u) << p.why_none;
  EXPECT_DOUBLE_EQ(p.match, 1.0);
  // The phase is the step's first launch (the one after the 50 us gap): 20 boundaries, 19 whole steps.
  ASSERT_EQ(p.boundaries.size(), 20u);
  for (size_t k = 0; k < p.boundaries.size(); ++k) EXPECT_EQ(p.boundaries[k], v[31 * k].start_ns);
}

TEST(PeriodicSteps, LeavesAWarmUpThatDiffersOutOfTheSteps) {
  // 300 autotuning launches, then 12 steps of 4 launches (a JAX job's shape).
  std::vector<uint32_t> warm;
  std::mt19937 rng(1);
  for (int i = 0; i < 300; ++i) warm.push_back(100 + rng() % 50);
  auto v = seq(warm, {1, 2, 3, 4}, 12);
  PeriodicSteps p = findPeriodicSteps(v);
  ASSERT_EQ(p.period, 4u) << p.why_none;
  ASSERT_GE(p.boundaries.size(), 12u);
  EXPECT_EQ(p.boundaries.front(), v[300].start_ns);  // the first step begins where the warm-up ends
  EXPECT_EQ(p.boundaries.back(), v[300 + 4 * 11].start_ns);
}

TEST(PeriodicSteps, NoPeriodInRandomLaunchesOrTooFew) {
  std::vector<LaunchMark> v;
  std::mt19937 rng(7);
  for (int i = 0; i < 5000; ++i) v.push_back({i * 2000, i * 2000 + 1000, static_cast<uint32_t>(rng() % 1000)});
  PeriodicSteps p = findPeriodicSteps(v);
  EXPECT_EQ(p.period, 0u);
  EXPECT_TRUE(p.boundaries.empty());
  EXPECT_NE(p.why_none.find("do not repeat"), std::string::npos) << p.why_none;
  PeriodicSteps few = findPeriodicSteps(seq({}, {1, 2}, 1));
  EXPECT_EQ(few.period, 0u);
  EXPECT_NE(few.why_none.find("too few"), std::string::npos) << few.why_none;
}

TEST(PeriodicSteps, ToleratesAFewDifferingLaunches) {
  // 40 steps of 50 launches; one launch in every fifth step differs (a logging kernel): 99.6 % match.
  std::vector<uint32_t> step(50);
  for (int i = 0; i < 50; ++i) step[i] = static_cast<uint32_t>(i + 1);
  auto v = seq({}, step, 40);
  for (int s = 0; s < 40; s += 5) v[s * 50 + 25].key = 999;
  PeriodicSteps p = findPeriodicSteps(v);
  EXPECT_EQ(p.period, 50u) << p.why_none;
  EXPECT_GT(p.match, 0.95);
  EXPECT_LT(p.match, 1.0);
}

}  // namespace
}  // namespace gpudoctor
