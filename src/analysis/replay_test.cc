// The replay engine: the unmodified graph reproduces the traced steps of real traces (2 x H200,
// scripts/make_traces.py, and the what-if validation jobs), and edits move the step the way the
// dependencies say (host-bound steps do not care about faster kernels; GPU-bound ones do).
#include "analysis/replay.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "sources/trace_set.h"

namespace gpudoctor {
namespace {

std::string src(const std::string& rel) { return std::string(GPUDOCTOR_SOURCE_DIR) + "/" + rel; }

struct Loaded {
  std::vector<RankTrace> traces;
  RunAnalysis run;
};

std::unique_ptr<Loaded> load(const std::vector<std::string>& rel) {
  std::vector<std::string> paths;
  for (const auto& r : rel) paths.push_back(src(r));
  auto l = std::make_unique<Loaded>();
  auto files = expandTracePaths(paths);
  EXPECT_TRUE(files.ok());
  auto t = readTraceSet(files.value());
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().message);
  l->traces = std::move(t.value());
  auto r = analyzeRun(l->traces, {});
  EXPECT_TRUE(r.ok());
  l->run = std::move(r.value());
  return l;
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

TEST(Replay, FasterKernelsShortenAGpuBoundStepButNotAHostBoundOne) {
  ReplayEdits half;
  half.kernel_scale.fill(0.5);
  // FP32 kernels the single-process loader partly hides: the GPU holds the step.
  auto gpu = load({"testdata/whatif/loader_bound__base.pt.trace.json.gz"});
  // 1,000 tiny kernels per step: the host's launches hold the step, not the kernels.
  auto host = load({"testdata/whatif/gpt_launch_bound__base.pt.trace.json.gz"});
  Replay g = replayRun(gpu->run, half), h = replayRun(host->run, half);
  ASSERT_TRUE(g.available && h.available);
  EXPECT_LT(g.replayed_step_ns, 0.9 * g.traced_step_ns);
  EXPECT_GT(h.replayed_step_ns, 0.99 * h.traced_step_ns);
  ReplayEdits none;
  none.kernel_scale.fill(0.0);
  Replay z = replayRun(gpu->run, none);
  EXPECT_LT(z.replayed_step_ns, g.replayed_step_ns);     // less GPU time, shorter still ...
  EXPECT_GT(z.replayed_step_ns, 0.5 * g.traced_step_ns);  // ... down to what the loader and host take
}

}  // namespace
}  // namespace gpudoctor
