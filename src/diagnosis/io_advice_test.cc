// The worker arithmetic with hand-made figures: workers = ceil(target / per-worker rate), sustainable
// only within the measured aggregate, decompression as CPU time per sample, fixes ranked by workers.
#include "diagnosis/io_advice.h"

#include <gtest/gtest.h>

namespace gpudoctor {
namespace {

IoPath path(const char* name, const char* fix, double one, double best, int best_threads, int max_threads = 4) {
  IoPath p;
  p.name = name;
  p.fix = fix;
  p.per_worker_samples_per_s = one;
  p.best_samples_per_s = best;
  p.best_threads = best_threads;
  p.max_threads_measured = max_threads;
  return p;
}

IoTarget target(double samples_per_s) {
  IoTarget t;
  t.samples_per_s = samples_per_s;
  t.sample_bytes = 4096;
  t.cpus = 8;
  return t;
}

TEST(IoAdvice, WorkersNeededWithinTheMeasuredAggregate) {
  auto a = adviseIo({path("small files, cold", "", 2000, 7000, 4)}, target(5000));
  ASSERT_EQ(a.paths.size(), 1u);
  EXPECT_EQ(a.paths[0].workers, 3);  // ceil(5000 / 2000)
  EXPECT_TRUE(a.paths[0].sustainable);
  EXPECT_NEAR(a.paths[0].headroom, 1.4, 1e-9);
  ASSERT_FALSE(a.fixes.empty());
  EXPECT_NE(a.fixes[0].find("num_workers=3"), std::string::npos) << a.fixes[0];
  EXPECT_NE(a.summary.find("3 workers sustain it"), std::string::npos) << a.summary;
}

TEST(IoAdvice, SaturatedStorageCannotSustainAndShardsAreTheFix) {
  // Small files stop scaling at 3,000/s; shards deliver 40,000/s from one worker.
  auto a = adviseIo(
      {path("small files, cold (today)", "", 1500, 3000, 2), path("small files, warm", "cache locally", 9000, 30000, 4),
       path("shards, cold", "pack into shards", 40000, 60000, 2)},
      target(20000));
  EXPECT_FALSE(a.paths[0].sustainable);
  EXPECT_FALSE(a.paths[0].beyond_measured);  // 3000 / (1500 x 2) is linear, but 2 < 4 measured: saturated
  EXPECT_NE(a.paths[0].verdict.find("cannot sustain 20,000 samples/s: it saturates at 3,000"), std::string::npos)
      << a.paths[0].verdict;
  EXPECT_EQ(a.paths[2].workers, 1);
  EXPECT_EQ(a.paths[1].workers, 3);
  ASSERT_GE(a.fixes.size(), 2u);
  EXPECT_EQ(a.fixes[0].rfind("pack into shards: 1 worker reach", 0), 0u) << a.fixes[0];
  EXPECT_EQ(a.fixes[1].rfind("cache locally: 3 workers", 0), 0u) << a.fixes[1];
  EXPECT_NE(a.summary.find("best fix: pack into shards (1 worker, 3.0x headroom)"), std::string::npos) << a.summary;
}

TEST(IoAdvice, OneWorkerIsEnoughSoFixesOnlyBuyHeadroom) {
  auto a =
      adviseIo({path("small files (today)", "", 5000, 5000, 1), path("shards", "pack into shards", 20000, 20000, 1)},
               target(2500));
  ASSERT_EQ(a.fixes.size(), 2u);
  EXPECT_EQ(a.fixes[0].rfind("no change needed: num_workers=1", 0), 0u) << a.fixes[0];
  EXPECT_EQ(a.fixes[1], "pack into shards: 8.0x headroom instead of 2.0x (20,000 samples/s per worker)");
}

TEST(IoAdvice, StillScalingAtTheLargestMeasuredCountIsAMaybe) {
  auto a = adviseIo({path("small files", "", 1000, 3900, 4, 4)}, target(10000));
  EXPECT_FALSE(a.paths[0].sustainable);
  EXPECT_TRUE(a.paths[0].beyond_measured);
  EXPECT_EQ(a.paths[0].workers, 10);
  EXPECT_NE(a.paths[0].verdict.find("measure with more threads"), std::string::npos);
}

TEST(IoAdvice, DecompressionIsCpuTimePerSample) {
  IoTarget t = target(1000);
  t.sample_bytes = 100000;
  t.compression_ratio = 2;           // 200 KB inflated per sample
  t.decompress_bytes_per_s = 200e6;  // 1 ms per sample
  t.cpus = 2;
  // Reading alone: 1 ms per sample. With inflating: 2 ms, so 500/s per worker and at most 1000/s on 2 cores.
  auto a = adviseIo({path("shards", "", 1000, 50000, 4)}, t);
  EXPECT_NEAR(a.paths[0].per_worker_samples_per_s, 500, 1e-6);
  EXPECT_EQ(a.paths[0].workers, 2);
  EXPECT_TRUE(a.paths[0].sustainable);
  EXPECT_NEAR(a.paths[0].headroom, 1.0, 1e-9);
  bool codec = false;
  for (const auto& f : a.fixes)
    codec |= f.find("uncompressed") != std::string::npos && f.find("50 %") != std::string::npos;
  EXPECT_TRUE(codec);
  t.samples_per_s = 1500;
  a = adviseIo({path("shards", "", 1000, 50000, 4)}, t);
  EXPECT_FALSE(a.paths[0].sustainable);  // CPU-bound: 2 cores x 500/s
}

TEST(IoAdvice, NothingReachesTheTarget) {
  auto a =
      adviseIo({path("small files", "", 100, 150, 2), path("shards", "pack into shards", 200, 300, 2)}, target(10000));
  EXPECT_NE(a.summary.find("no measured option reaches it"), std::string::npos) << a.summary;
  EXPECT_NE(a.fixes[0].find("not enough either"), std::string::npos);
}

}  // namespace
}  // namespace gpudoctor
