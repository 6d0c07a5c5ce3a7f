#include "analysis/fleet_focus.h"

#include <gtest/gtest.h>

namespace gpudoctor {
namespace fleet_focus_test {
constexpr int64_t kMs = 1'000'000;

// A rank of a synchronous job in one process group: `steps` steps of `wall` ns with one collective
// each lasting `coll` ns.
RankDigest rank(int r, int world, int steps, int64_t wall, int64_t coll) {
  RankDigest d;
  d.rank = r;
  d.world_size = world;
  d.path = "rank" + std::to_string(r) + ".json.gz";
  d.groups.push_back({"0", "default_pg", world, r});
  for (int s = 0; s < steps; ++s) {
    StepFigures f;
    f.number = s;
    f.wall = wall;
    f.compute = wall / 2;
    f.idle_host = wall - wall / 2;
    d.steps.push_back(f);
    d.collectives.push_back({0, static_cast<uint32_t>(s), static_cast<uint32_t>(s), coll});
  }
  return d;
}

// Rank `slow` computes `extra` more every step; the others wait for it in the step's collective.
std::vector<RankDigest> jobWithStraggler(int n, int slow, int64_t extra) {
  std::vector<RankDigest> job;
  for (int r = 0; r < n; ++r) job.push_back(rank(r, n, 6, 20 * kMs + r * kMs / 100, kMs));
  for (auto& d : job)
    for (size_t s = 0; s < d.steps.size(); ++s) {
      d.steps[s].wall += extra;
      if (d.rank == slow) {
        d.steps[s].compute += extra;
      } else {
        d.steps[s].comm_exposed += extra;
        d.collectives[s].dur_ns += extra;
      }
    }
  return job;
}

std::vector<int> ranksOf(const std::vector<FocusRank>& f) {
  std::vector<int> out;
  for (const auto& r : f) out.push_back(r.rank);
  return out;
}

TEST(FleetFocus, TheSlowestTheMedianAndTheStraggler) {
  auto job = jobWithStraggler(9, 2, 4 * kMs);
  auto f = analyzeFleet(job);
  ASSERT_TRUE(f.ok()) << f.error().message;
  auto focus = pickFocusRanks(f.value(), job);
  // Mean steps rise with the rank (0.01 ms apart): rank 8 is the slowest, rank 4 the median.
  EXPECT_EQ(ranksOf(focus), (std::vector<int>{8, 4, 2}));
  ASSERT_EQ(focus.size(), kFocusRanksMax);
  EXPECT_EQ(focus[0].reasons, std::vector<std::string>{"slowest"});
  EXPECT_EQ(focus[1].reasons, std::vector<std::string>{"median"});
  EXPECT_EQ(focus[2].reasons, std::vector<std::string>{"straggler"});
  EXPECT_NE(focus[2].why[0].find("holds back process group 0 (default_pg)"), std::string::npos) << focus[2].why[0];
  EXPECT_EQ(focus[0].path, "rank8.json.gz");
  EXPECT_EQ(focus[2].path, "rank2.json.gz");
  for (const auto& r : focus) EXPECT_FALSE(r.analyzed);
}

TEST(FleetFocus, ARankPickedTwiceIsListedOnceWithBothReasons) {
  std::vector<RankDigest> one = {rank(0, 1, 4, 20 * kMs, kMs)};
  auto f = analyzeFleet(one);
  ASSERT_TRUE(f.ok()) << f.error().message;
  auto focus = pickFocusRanks(f.value(), one);
  ASSERT_EQ(focus.size(), 1u);
  EXPECT_EQ(focus[0].reasons, (std::vector<std::string>{"slowest", "median"}));
  EXPECT_EQ(focus[0].why.size(), 2u);
}

TEST(FleetFocus, OfEqualStepsTheSlowestIsTheOneThatWaitedLeast) {
  // Every rank's step is the same (they wait for rank 5 in their collective); rank 5's own time is
  // the longest, so it is the slowest, and as the straggler it is listed once.
  std::vector<RankDigest> job;
  for (int r = 0; r < 8; ++r) job.push_back(rank(r, 8, 6, 20 * kMs, kMs));
  for (auto& d : job)
    for (size_t s = 0; s < d.steps.size(); ++s)
      if (d.rank != 5) d.collectives[s].dur_ns += 3 * kMs;
  auto f = analyzeFleet(job);
  ASSERT_TRUE(f.ok()) << f.error().message;
  auto focus = pickFocusRanks(f.value(), job);
  ASSERT_FALSE(focus.empty());
  EXPECT_EQ(focus[0].rank, 5);
  EXPECT_EQ(focus[0].reasons, (std::vector<std::string>{"slowest", "straggler"}));
  EXPECT_EQ(ranksOf(focus), (std::vector<int>{5, 3}));  // the median: the lower middle in rank order
}

TEST(FleetFocus, LeftOutRanksAreNeverPicked) {
  std::vector<RankDigest> job;
  for (int r = 0; r < 3; ++r) job.push_back(rank(r, 4, 4, (20 + r) * kMs, kMs));
  RankDigest cpu;
  cpu.rank = 3;
  cpu.world_size = 4;
  cpu.path = "rank3.json.gz";
  cpu.left_out = "no GPU activity";
  job.push_back(cpu);
  auto f = analyzeFleet(job);
  ASSERT_TRUE(f.ok()) << f.error().message;
  for (const auto& r : pickFocusRanks(f.value(), job)) EXPECT_NE(r.rank, 3);
}

}  // namespace fleet_focus_test
}  // namespace gpudoctor
