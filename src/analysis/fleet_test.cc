#include "analysis/fleet.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace gpudoctor {
namespace fleet_test {
constexpr int64_t kMs = 1'000'000;

// A rank of a synchronous job: `steps` steps of `wall` ns each (compute `compute`, the rest GPU idle
// waiting for the host), and `colls` collectives per step in group 0 lasting `coll` ns.
RankDigest rank(int r, int world, int steps, int64_t wall, int64_t compute, int colls, int64_t coll) {
  RankDigest d;
  d.rank = r;
  d.world_size = world;
  d.path = "rank" + std::to_string(r);
  d.groups.push_back({"0", "default_pg", world, r});
  for (int s = 0; s < steps; ++s) {
    StepFigures f;
    f.number = 10 + s;
    f.wall = wall;
    f.compute = compute;
    f.idle_host = wall - compute;
    d.steps.push_back(f);
    for (int c = 0; c < colls; ++c)
      d.collectives.push_back({0, static_cast<uint32_t>(s * colls + c), static_cast<uint32_t>(s), coll});
  }
  d.classes.push_back({"gemm_bf16", 5, compute});
  return d;
}

// Rank `slow` computes `extra` more in step index s: the others wait `extra` in that step's first
// collective (their kernel lasts longer, their step is longer by the same amount).
void delay(std::vector<RankDigest>& job, int slow, size_t s, int64_t extra, bool host) {
  for (auto& d : job) {
    d.steps[s].wall += extra;
    if (d.rank == slow) {
      (host ? d.steps[s].idle_host : d.steps[s].compute) += extra;
    } else {
      d.steps[s].comm_exposed += extra;
      for (auto& c : d.collectives)
        if (c.step == s) {
          c.dur_ns += extra;
          break;
        }
    }
  }
}

std::vector<RankDigest> healthyJob(int n, int steps) {
  std::vector<RankDigest> job;
  for (int r = 0; r < n; ++r) job.push_back(rank(r, n, steps, 20 * kMs, 15 * kMs, 3, kMs / 2));
  return job;
}

TEST(Fleet, AHealthyJobHasNoFinding) {
  auto f = analyzeFleet(healthyJob(8, 6));
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f.value().ranks, 8);
  EXPECT_EQ(f.value().rank_steps, 48);
  EXPECT_TRUE(f.value().slow_ranks.empty());
  EXPECT_TRUE(f.value().outliers.empty());
  EXPECT_TRUE(f.value().slow_steps.empty());
  ASSERT_EQ(f.value().groups.size(), 1u);
  EXPECT_EQ(f.value().groups[0].matched, 18);
  EXPECT_EQ(f.value().groups[0].straggler, -1);
  EXPECT_DOUBLE_EQ(f.value().groups[0].wait_fraction, 0);
  EXPECT_FALSE(f.value().stages.known);
  EXPECT_DOUBLE_EQ(f.value().step_ns, 20.0 * kMs);
}

TEST(Fleet, ASlowRankIsNamedWithItsExcessCauseAndWhatIf) {
  auto job = healthyJob(8, 6);
  for (size_t s = 0; s < 6; ++s) delay(job, 3, s, 2 * kMs, false);
  auto f = analyzeFleet(job);
  ASSERT_TRUE(f.ok());
  ASSERT_EQ(f.value().slow_ranks.size(), 1u);
  const auto& s = f.value().slow_ranks[0];
  EXPECT_EQ(s.rank, 3);
  EXPECT_EQ(s.steps_flagged, 6);
  EXPECT_DOUBLE_EQ(s.excess_ns, 2.0 * kMs);
  EXPECT_NE(s.cause.find("more GPU compute"), std::string::npos) << s.cause;
  EXPECT_EQ(s.groups, std::vector<std::string>{"0"});
  EXPECT_DOUBLE_EQ(s.what_if_step_ns, 20.0 * kMs);  // 22 ms now, the others stop waiting 2 ms
  EXPECT_TRUE(f.value().outliers.empty());
  const auto& g = f.value().groups[0];
  EXPECT_EQ(g.straggler, 3);
  EXPECT_DOUBLE_EQ(g.cause_steps, 1.0);
  EXPECT_DOUBLE_EQ(g.others_wait_ns, 2.0 * kMs);
  // Own time: the slow rank's wall, the others' wall minus their waiting.
  EXPECT_DOUBLE_EQ(f.value().rows[3].own_ns, 22.0 * kMs);
  EXPECT_DOUBLE_EQ(f.value().rows[0].own_ns, 20.0 * kMs);
  EXPECT_DOUBLE_EQ(f.value().rows[0].wait_ns, 2.0 * kMs);
}

TEST(Fleet, AHostPauseOnOneRankInOneStepIsAnOutlierNotASlowRankNorASlowStep) {
  auto job = healthyJob(8, 6);
  delay(job, 5, 2, 30 * kMs, true);
  auto f = analyzeFleet(job);
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f.value().slow_ranks.empty());
  ASSERT_EQ(f.value().outliers.size(), 1u);
  const auto& o = f.value().outliers[0];
  EXPECT_EQ(o.rank, 5);
  EXPECT_EQ(o.step, 12);
  EXPECT_DOUBLE_EQ(o.excess_ns, 30.0 * kMs);
  EXPECT_NE(o.cause.find("host pause"), std::string::npos) << o.cause;
  EXPECT_TRUE(f.value().slow_steps.empty());     // the pause explains step 12's length
  EXPECT_EQ(f.value().groups[0].straggler, -1);  // one step in six is not a straggler
  EXPECT_EQ(f.value().groups[0].top_cause, 5);
}

TEST(Fleet, AStepSlowOnEveryRankIsASlowStep) {
  auto job = healthyJob(6, 5);
  for (auto& d : job) {
    d.steps[3].wall += 8 * kMs;
    d.steps[3].idle_other += 8 * kMs;
  }
  auto f = analyzeFleet(job);
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f.value().outliers.empty());
  ASSERT_EQ(f.value().slow_steps.size(), 1u);
  EXPECT_EQ(f.value().slow_steps[0].step, 13);
  EXPECT_DOUBLE_EQ(f.value().slow_steps[0].excess_ns, 8.0 * kMs);
}

TEST(Fleet, TwoRanksNameTheStragglerButNoOutliers) {
  auto job = healthyJob(2, 4);
  for (size_t s = 0; s < 4; ++s) delay(job, 1, s, 3 * kMs, false);
  auto f = analyzeFleet(job);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f.value().groups[0].straggler, 1);
  EXPECT_TRUE(f.value().slow_ranks.empty());  // the median of two cannot tell which is off
  EXPECT_TRUE(f.value().outliers.empty());
}

// Two stages of three ranks; stage 1 computes 4 ms more per step. Ranks are judged against their
// own stage, so the slow stage is one finding, not three slow ranks.
TEST(Fleet, PipelineStagesComeFromPipelineGroupsAndRanksAreJudgedWithinTheirStage) {
  std::vector<RankDigest> job;
  for (int r = 0; r < 6; ++r) {
    auto d = rank(r, 6, 4, 20 * kMs, (r >= 3 ? 14 : 10) * kMs, 2, kMs);
    d.groups[0] = {r < 3 ? "1" : "2", "DATA_PARALLEL_GROUP", 3, r % 3};
    d.groups.push_back({std::to_string(3 + r % 3), "PIPELINE_MODEL_PARALLEL_GROUP", 2, r / 3});
    job.push_back(std::move(d));
  }
  auto f = analyzeFleet(job);
  ASSERT_TRUE(f.ok());
  const auto& st = f.value().stages;
  ASSERT_TRUE(st.known);
  ASSERT_EQ(st.stages.size(), 2u);
  EXPECT_EQ(st.stages[1].ranks, (std::vector<int>{3, 4, 5}));
  EXPECT_EQ(st.slowest, 1);
  EXPECT_TRUE(st.flagged);
  EXPECT_DOUBLE_EQ(st.excess_ns, 2.0 * kMs);  // 14 ms against the median of 10 and 14
  EXPECT_NEAR(st.imbalance, 14.0 / 12.0 - 1, 1e-12);
  EXPECT_TRUE(f.value().slow_ranks.empty());
  EXPECT_TRUE(f.value().outliers.empty());
  EXPECT_EQ(f.value().groups.size(), 2u);  // the data-parallel groups (pipeline groups have no collective)
}

TEST(Fleet, TheReportDoesNotDependOnTheDigestsOrder) {
  auto job = healthyJob(9, 5);
  for (size_t s = 0; s < 5; ++s) delay(job, 7, s, 2 * kMs, false);
  delay(job, 2, 1, 9 * kMs, true);
  auto a = analyzeFleet(job);
  std::mt19937 rng(7);
  std::shuffle(job.begin(), job.end(), rng);
  auto b = analyzeFleet(job);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a.value().slow_ranks.size(), 1u);
  ASSERT_EQ(b.value().slow_ranks.size(), 1u);
  EXPECT_EQ(a.value().slow_ranks[0].rank, b.value().slow_ranks[0].rank);
  EXPECT_EQ(a.value().slow_ranks[0].excess_ns, b.value().slow_ranks[0].excess_ns);
  ASSERT_EQ(a.value().outliers.size(), b.value().outliers.size());
  EXPECT_EQ(a.value().outliers[0].rank, 2);
  EXPECT_EQ(a.value().step_ns, b.value().step_ns);
  for (size_t i = 0; i < a.value().rows.size(); ++i) EXPECT_EQ(a.value().rows[i].own_ns, b.value().rows[i].own_ns);
}

TEST(Fleet, CollectivesMissingOnSomeMemberAreCountedNotMatched) {
  auto job = healthyJob(3, 2);
  job[1].collectives.pop_back();
  auto f = analyzeFleet(job);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f.value().groups[0].matched, 5);
  EXPECT_EQ(f.value().groups[0].unmatched, 1);
  EXPECT_FALSE(f.value().notes.empty());
}

TEST(Fleet, DuplicateRanksAndRunsWithoutStepsAreErrors) {
  auto job = healthyJob(3, 2);
  job[2].rank = 1;
  auto f = analyzeFleet(job);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.error().message.find("rank 1 appears twice"), std::string::npos);
  std::vector<RankDigest> none(1);
  none[0].rank = 0;
  none[0].left_out = "no GPU activity";
  EXPECT_FALSE(analyzeFleet(none).ok());
}

TEST(Fleet, MissingAndLeftOutRanksAreNamed) {
  auto job = healthyJob(4, 2);
  job.erase(job.begin() + 2);
  job[0].steps.clear();
  job[0].collectives.clear();
  job[0].left_out = "no GPU activity";
  EXPECT_EQ(missingRanks(job), std::vector<int>{2});
  auto f = analyzeFleet(job);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f.value().ranks, 2);
  ASSERT_EQ(f.value().left_out.size(), 1u);
  bool named = false;
  for (const auto& n : f.value().notes) named |= n.find("missing: 2") != std::string::npos;
  EXPECT_TRUE(named);
}

}  // namespace fleet_test
}  // namespace gpudoctor
