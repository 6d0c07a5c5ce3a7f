// The replay engine: the unmodified graph reproduces the traced steps of real traces (2 x H200,
// scripts/make_traces.py, and the what-if validation jobs), and edits move the step the way the
// dependencies say (host-bound steps do not care about faster kernels; GPU-bound ones do).
#include "analysis/replay.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "analysis/trace_builder_test_util.h"
#include "analysis/run_test_util.h"

namespace gpudoctor {
namespace {

std::string src(const std::string& rel) { return testing::srcPath(rel); }

// Reads and analyzes paths relative to the source tree.
std::unique_ptr<testing::Loaded> load(const std::vector<std::string>& rel) {
  std::vector<std::string> paths;
  for (const auto& r : rel) paths.push_back(src(r));
  return testing::loadRun(paths);
}

TEST(Replay, UnmodifiedGraphReproducesEveryCommittedTrace) {
  for (auto set : std::vector<std::vector<std::string>>{
           {"examples/ddp_bf16_flash"},
           {"testdata/kineto/fp32_naive_rank0.pt.trace.json.gz", "testdata/kineto/fp32_naive_rank1.pt.trace.json.gz"},
           {"testdata/kineto/launch_bound_rank0.pt.trace.json.gz", "testdata/kineto/launch_bound_rank1.pt.trace.json.gz"}}) {
    auto l = load(set);
    Replay r = replayRun(l->run);
    ASSERT_TRUE(r.available) << r.reason;
    EXPECT_LT(r.worst_error, 0.001) << set[0];
    EXPECT_GT(r.stats.calls, 100);
    EXPECT_GT(r.stats.collective_groups, 0) << set[0];
    for (const auto& rank : r.ranks)
      for (const auto& w : rank.windows) EXPECT_NEAR(w.replayed_ns, w.traced_ns, 1000) << set[0] << " step " << w.number;
  }
}

TEST(Replay, UnmodifiedGraphReproducesEveryValidationJob) {
  namespace fs = std::filesystem;
  int n = 0;
  for (const auto& f : fs::directory_iterator(src("testdata/whatif"))) {
    if (f.path().string().find(".pt.trace.json.gz") == std::string::npos) continue;
    auto l = load({"testdata/whatif/" + f.path().filename().string()});
    Replay r = replayRun(l->run);
    ASSERT_TRUE(r.available) << f.path() << ": " << r.reason;
    EXPECT_LT(r.worst_error, 0.001) << f.path();
    ++n;
  }
  EXPECT_GE(n, 30);
}

// Two steps of `kernels` launches (a launch call of `launch_ns`, then `gap_ns` of host work), each
// kernel `kernel_ns` long, then a cudaDeviceSynchronize that waits for the last kernel.
RankTrace syntheticSteps(int kernels, int64_t launch_ns, int64_t gap_ns, int64_t kernel_ns) {
  TraceBuilder b;
  int64_t t = 1000, corr = 1;
  for (int step = 1; step <= 2; ++step) {
    int64_t step_begin = t, gpu_free = t;
    for (int k = 0; k < kernels; ++k, ++corr) {
      int64_t start = std::max(t + 2000, gpu_free);  // 2 us launch latency, then stream order
      b.launch(corr, t, t + launch_ns, EventKind::kKernel, TraceBuilder::kStream7, "my_gemm", start, start + kernel_ns);
      gpu_free = start + kernel_ns;
      t += launch_ns + gap_ns;
    }
    int64_t sync_end = std::max(t, gpu_free) + 3000;
    b.add(EventKind::kRuntimeCall, TraceBuilder::kHost, "cudaDeviceSynchronize", t, sync_end, corr++);
    t = sync_end + 5000;
    b.step(step, step_begin, t);
  }
  return b.done();
}

Replay replayOf(const RankTrace& t, const ReplayEdits& ed = {}) {
  std::vector<RankTrace> v;
  v.push_back(RankTrace(std::move(const_cast<RankTrace&>(t))));
  auto run = analyzeRun(v, {});
  EXPECT_TRUE(run.ok());
  return replayRun(run.value(), ed);
}

TEST(Replay, FasterKernelsShortenAGpuBoundStepButNotAHostBoundOne) {
  ReplayEdits half;
  half.kernel_scale.fill(0.5);
  // GPU-bound: 20 kernels of 1 ms launched every 15 us; the sync waits for the GPU.
  Replay g0 = replayOf(syntheticSteps(20, 5000, 10000, 1000000));
  Replay g = replayOf(syntheticSteps(20, 5000, 10000, 1000000), half);
  ASSERT_TRUE(g0.available && g.available) << g.reason;
  EXPECT_LT(g0.worst_error, 1e-9);
  EXPECT_NEAR(g.replayed_step_ns, g0.traced_step_ns - 20 * 500000, 1000);  // every kernel's half saved
  EXPECT_EQ(g.stats.sync_waits, 2);
  // Launch-bound: kernels of 5 us launched every 60 us; halving them changes nothing.
  Replay h0 = replayOf(syntheticSteps(50, 10000, 50000, 5000));
  Replay h = replayOf(syntheticSteps(50, 10000, 50000, 5000), half);
  ASSERT_TRUE(h.available);
  EXPECT_NEAR(h.replayed_step_ns, h0.traced_step_ns, 3000);  // only the last kernel's half
  // The profiler's host cost removed: no host events recorded here, so only the calls shrink.
  ReplayEdits oh;
  oh.api_call_overhead_ns = 4000;
  Replay o = replayOf(syntheticSteps(50, 10000, 50000, 5000), oh);
  EXPECT_NEAR(o.replayed_step_ns, h0.traced_step_ns - 50 * 4000, 5000);
}


TEST(Replay, WhatItCannotModelIsUnavailableWithTheReason) {
  {  // GPU work without launch records
    TraceBuilder b;
    b.step(1, 1000, 100000);
    for (int k = 0; k < 10; ++k) b.add(EventKind::kKernel, TraceBuilder::kStream7, "my_gemm", 2000 + 5000 * k, 6000 + 5000 * k);
    Replay r = replayOf(b.done());
    EXPECT_FALSE(r.available);
    EXPECT_NE(r.reason.find("only 0% of the GPU work links to a recorded launch call"), std::string::npos) << r.reason;
  }
  {  // a step annotation that outlives everything recorded
    TraceBuilder b;
    b.launch(1, 2000, 3000, EventKind::kKernel, TraceBuilder::kStream7, "my_gemm", 4000, 9000);
    b.step(1, 1000, 13000000000);
    Replay r = replayOf(b.done());
    EXPECT_FALSE(r.available);
    EXPECT_NE(r.reason.find("step 1 ends"), std::string::npos) << r.reason;
  }
}

}  // namespace
}  // namespace gpudoctor
