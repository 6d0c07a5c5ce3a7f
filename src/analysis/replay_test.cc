// The replay engine: the unmodified graph reproduces the traced steps of real traces (2 x H200,
// scripts/testdata/make_traces.py, and the what-if validation jobs), and edits move the step the way the
// dependencies say (host-bound steps do not care about faster kernels; GPU-bound ones do).
#include "analysis/replay/replay.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "analysis/run_test_util.h"
#include "analysis/trace_builder_test_util.h"

namespace gpudoctor {
namespace replay_test {
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
           {"testdata/kineto/launch_bound_rank0.pt.trace.json.gz",
            "testdata/kineto/launch_bound_rank1.pt.trace.json.gz"}}) {
    auto l = load(set);
    Replay r = replayRun(l->run);
    ASSERT_TRUE(r.available) << r.reason;
    EXPECT_LT(r.worst_error, 0.001) << set[0];
    EXPECT_GT(r.stats.calls, 100);
    EXPECT_GT(r.stats.collective_groups, 0) << set[0];
    for (const auto& rank : r.ranks)
      for (const auto& w : rank.windows)
        EXPECT_NEAR(w.replayed_ns, w.traced_ns, 1000) << set[0] << " step " << w.number;
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

// `steps` steps of `kernels` launches (a launch call of `launch_ns`, then `gap_ns` of host work),
// each kernel `kernel_ns` long, then a cudaDeviceSynchronize that waits for the last kernel.
RankTrace syntheticSteps(int kernels, int64_t launch_ns, int64_t gap_ns, int64_t kernel_ns, int steps = 2) {
  TraceBuilder b;
  int64_t t = 1000, corr = 1;
  for (int step = 1; step <= steps; ++step) {
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

// A GPU-bound ResNeXt-50 on an H100 (testdata/lab, the fit job resnext50_fp32) fills the launch queue after
// its first step: steps 3-5 take 54 ms against the first's 37.5, every launch then waiting 20-200 us for
// a slot. With every kernel 20x faster, nothing is left to wait for.
// - The launch latency comes from work launched onto an idle device: onto an idle stream of a busy one,
//   work waits in the queue (here 40 ms), and that delay as every launch's least held each kernel 40 ms
//   behind its launch (the GPU's period stayed at 42 ms).
// - A launch of 20 us or more made at the queue's depth waited for a slot: kept as host time, those held
//   the host at the old pace (44.8 ms).
TEST(Replay, AFullLaunchQueueHoldsTheHostOnlyWhileTheGpuIsSlow) {
  auto l = load({"testdata/lab/resnext50_fp32__base_h100.pt.trace.json.gz"});
  ASSERT_FALSE(l->run.ranks.empty());
  ReplayEdits fast;
  fast.kernel_scale.fill(0.05);
  fast.memset_scale = fast.memcpy_scale = 0.05;
  const Replay r = replayRun(l->run, fast);
  ASSERT_TRUE(r.available) << r.reason;
  ASSERT_FALSE(r.ranks.empty());
  ASSERT_GE(r.ranks[0].windows.size(), 3u);
  const double unblocked = static_cast<double>(r.ranks[0].windows[0].traced_ns);
  EXPECT_LT(r.traced.gpu_period_ns, 60e6);
  EXPECT_LT(r.replayed.gpu_period_ns, 0.2 * r.traced.gpu_period_ns);
  EXPECT_LT(r.replayed_step_ns, 1.05 * unblocked);
  EXPECT_GE(r.stats.queue_waits, 300);
}

TEST(Replay, ALongTraceReplaysItsFirstStepsAlone) {
  // A trace of 40 steps replays its first 32, as a trace of those 32 steps alone does.
  const int steps = static_cast<int>(kReplayMaxSteps) + 8, k = static_cast<int>(kReplayMaxSteps);
  Replay first = replayOf(syntheticSteps(20, 5000, 10000, 1000000, k));
  Replay all = replayOf(syntheticSteps(20, 5000, 10000, 1000000, steps));
  ASSERT_TRUE(first.available && all.available) << all.reason;
  EXPECT_EQ(all.windows_replayed, kReplayMaxSteps);
  EXPECT_EQ(all.windows_total, static_cast<size_t>(steps));
  EXPECT_EQ(first.windows_replayed, first.windows_total);
  EXPECT_LT(all.worst_error, 1e-9);  // the windows replayed are reproduced exactly
  EXPECT_EQ(all.traced_step_ns, first.traced_step_ns);
  ReplayEdits half;
  half.kernel_scale.fill(0.5);
  EXPECT_EQ(replayOf(syntheticSteps(20, 5000, 10000, 1000000, steps), half).replayed_step_ns,
            replayOf(syntheticSteps(20, 5000, 10000, 1000000, k), half).replayed_step_ns);
}

// Two steps of 200 operators, each followed by a 1 us kernel's launch; the host time before the
// k-th operator (since the launch before it ended) cycles through 1, 2, 3 and 4 us; the last
// `accum_nodes` operators of each step are AccumulateGrad nodes.
RankTrace hostGapSteps(int accum_nodes = 0) {
  TraceBuilder b;
  int64_t t = 1000, corr = 1;
  for (int step = 1; step <= 2; ++step) {
    const int64_t step_begin = t;
    for (int k = 0; k < 200; ++k, ++corr) {
      t += 1000 * (1 + k % 4);
      const bool accum = k >= 200 - accum_nodes;
      b.add(EventKind::kHostOp, TraceBuilder::kHost,
            accum ? "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad" : "aten::mul", t, t + 3000);
      t += 3000;
      b.launch(corr, t, t + 4000, EventKind::kKernel, TraceBuilder::kStream7, "my_add", t + 6000, t + 7000);
      t += 4000;
    }
    b.add(EventKind::kRuntimeCall, TraceBuilder::kHost, "cudaDeviceSynchronize", t, t + 5000, corr++);
    t += 10000;
    b.step(step, step_begin, t);
  }
  return b.done();
}

// The host's speed as traced: the quarter-point of the host time before each operator; and the
// profiler's cost per event scaled by it, rank by rank.
TEST(Replay, HostGapQuarterPointScalesTheProfilersCost) {
  std::vector<RankTrace> v;
  v.push_back(hostGapSteps());
  auto run = analyzeRun(v, {});
  ASSERT_TRUE(run.ok());
  ReplayModel m(run.value());
  ASSERT_EQ(m.hostGapP25().size(), 1u);
  EXPECT_EQ(m.hostGapP25()[0], 2000);  // 100 of the 400 gaps are 1 us, the next 100 are 2 us
  Replay traced = m.replay();
  ReplayEdits ed;
  ed.host_event_overhead_ns = 500;
  Replay one = m.replay(ed);
  ed.rank_profiler_scale = {2.0};
  Replay two = m.replay(ed);
  ASSERT_TRUE(traced.available && one.available && two.available);
  // Host-bound: each operator's cost comes off the step, 0.5 us and then 1 us of it.
  EXPECT_NEAR(traced.replayed_step_ns - one.replayed_step_ns, 200 * 500, 1000);
  EXPECT_NEAR(traced.replayed_step_ns - two.replayed_step_ns, 200 * 1000, 1000);
}

// A host-speed gauge (a ReplayModel member) of the one-step trace `b` holds from `begin` to `end`.
std::vector<int64_t> gaugeOf(TraceBuilder& b, int64_t begin, int64_t end,
                             std::vector<int64_t> (ReplayModel::*gauge)() const) {
  b.step(1, begin, end);
  std::vector<RankTrace> v;
  v.push_back(b.done());
  auto run = analyzeRun(v, {});
  EXPECT_TRUE(run.ok());
  if (!run.ok()) return {};
  return (ReplayModel(run.value()).*gauge)();
}

// The host's speed as its kernel launches show it: the median of the calls that launch one kernel;
// a copy's launch and a synchronizing call are not in it, and fewer than 100 launches tell nothing.
TEST(Replay, LaunchCallMedianGaugesTheHostsSpeed) {
  auto gauge = [](int launches) {
    TraceBuilder b;
    int64_t t = 1000, corr = 1;
    const int64_t begin = t;
    for (int k = 0; k < launches; ++k, ++corr) {
      const int64_t d = 1000 * (1 + k % 5);  // 1..5 us: the median is 3 us
      b.launch(corr, t, t + d, EventKind::kKernel, TraceBuilder::kStream7, "my_add", t + d + 500, t + d + 1500);
      t += d + 2000;
    }
    for (int k = 0; k < 60; ++k, ++corr) {  // copies' launches, long: not kernels
      b.launch(corr, t, t + 50000, EventKind::kMemcpy, TraceBuilder::kStream7, "Memcpy HtoD (Pinned -> Device)",
               t + 100, t + 40000);
      t += 52000;
    }
    b.add(EventKind::kRuntimeCall, TraceBuilder::kHost, "cudaDeviceSynchronize", t, t + 90000, corr++);
    t += 100000;
    return gaugeOf(b, begin, t, &ReplayModel::launchCallP50);
  };
  EXPECT_EQ(gauge(150), std::vector<int64_t>{3000});
  EXPECT_EQ(gauge(99), std::vector<int64_t>{0});
}

// The host's speed as dispatch inside operators shows it: the median time from an operator's start to
// its first child operator's; a second child, a Python frame and a childless operator are not in it,
// and fewer than 100 pairs tell nothing.
TEST(Replay, DispatchMedianGaugesTheHostsSpeed) {
  auto gauge = [](int parents) {
    TraceBuilder b;
    int64_t t = 1000, corr = 1;
    const int64_t begin = t;
    for (int k = 0; k < parents; ++k) {
      const int64_t d = 1000 * (1 + k % 5);  // 1..5 us to the first child: the median is 3 us
      b.add(EventKind::kHostOp, TraceBuilder::kHost, "aten::linear", t, t + 20000);
      b.add(EventKind::kHostFunction, TraceBuilder::kHost, "torch/nn/functional.py(1): linear", t + 200, t + 400);
      b.add(EventKind::kHostOp, TraceBuilder::kHost, "aten::t", t + d, t + d + 1000);
      b.add(EventKind::kHostOp, TraceBuilder::kHost, "aten::addmm", t + 9000, t + 15000);  // a second child
      b.launch(corr++, t + 10000, t + 14000, EventKind::kKernel, TraceBuilder::kStream7, "my_gemm", t + 14500,
               t + 16000);
      b.add(EventKind::kHostOp, TraceBuilder::kHost, "aten::empty", t + 21000, t + 22000);  // no child
      t += 25000;
    }
    return gaugeOf(b, begin, t, &ReplayModel::dispatchP50);
  };
  EXPECT_EQ(gauge(150), std::vector<int64_t>{3000});
  EXPECT_EQ(gauge(99), std::vector<int64_t>{0});
}

// The profiler's cost per call by what the call does (cuDNN's pattern: attribute queries and error
// strings around each launch): a launch loses the launch cost, cudaFuncGetAttributes its own, a call
// that does nothing the idle cost; each unset cost falls back as ReplayEdits says. A call traced
// shorter than its cost (the error string: 200 ns) loses the rest from the host gap before it (500
// ns here), never below zero.
TEST(Replay, EachKindOfCallLosesItsOwnProfilerCost) {
  TraceBuilder b;
  int64_t t = 1000, corr = 1;
  const int64_t begin = t;
  for (int k = 0; k < 100; ++k) {
    b.add(EventKind::kRuntimeCall, TraceBuilder::kHost, "cudaFuncGetAttributes", t, t + 4000, corr++);
    t += 4500;
    b.add(EventKind::kRuntimeCall, TraceBuilder::kHost, "cudaGetErrorString", t, t + 200, corr++);
    t += 200;
    b.launch(corr++, t, t + 7000, EventKind::kKernel, TraceBuilder::kStream7, "my_add", t + 7500, t + 8000);
    t += 7000;
  }
  b.add(EventKind::kRuntimeCall, TraceBuilder::kHost, "cudaDeviceSynchronize", t, t + 2000, corr++);
  t += 2000;
  b.step(1, begin, t);
  std::vector<RankTrace> v;
  v.push_back(b.done());
  auto run = analyzeRun(v, {});
  ASSERT_TRUE(run.ok());
  ReplayModel m(run.value());
  const double traced = m.replay().replayed_step_ns;
  auto saved = [&](int64_t call, int64_t idle, int64_t attr) {
    ReplayEdits ed;
    ed.api_call_overhead_ns = call, ed.idle_call_overhead_ns = idle, ed.attr_call_overhead_ns = attr;
    Replay r = m.replay(ed);
    EXPECT_TRUE(r.available) << r.reason;
    return traced - r.replayed_step_ns;
  };
  // Host-bound: 100 x (launch + query + error string) come off the step, less the last kernel's wait.
  EXPECT_NEAR(saved(1000, 300, 2500), 100 * (1000 + 2500 + 300), 3000);  // the error string: 200 + 100 before
  EXPECT_NEAR(saved(1000, 100, -1), 100 * (1000 + 100 + 100), 3000);     // the query: at the idle cost
  EXPECT_NEAR(saved(1000, -1, -1), 100 * (1000 + 1000 + 700), 3000);     // both at the call cost: 200 + 500
}

// Graphed with the optimizer eager (GradScaler): the launches and host gaps go, and each
// AccumulateGrad node brings the graphed calls' own cost where it ran.
TEST(Replay, GraphedCallsCostTheHostPerAccumulateGradNode) {
  std::vector<RankTrace> v;
  v.push_back(hostGapSteps(10));
  auto run = analyzeRun(v, {});
  ASSERT_TRUE(run.ok());
  ReplayModel m(run.value());
  ReplayEdits graphed;
  graphed.free_launches = graphed.graph_keeps_optimizer = true;
  Replay free = m.replay(graphed);
  graphed.graphed_param_ops = 10;  // 10 operators' worth each, at the rank's 5 us an operator
  graphed.rank_op_ns = {5000};
  Replay charged = m.replay(graphed);
  ASSERT_TRUE(free.available && charged.available);
  EXPECT_LT(free.replayed_step_ns, 300000);  // 200 kernels of 1 us and the closing sync
  // The ten nodes' 0.5 ms run on the host before the last ten launches, the earlier kernels under
  // them: the step is that, the last kernels and the sync.
  EXPECT_GE(charged.replayed_step_ns, 10 * 50000);
  EXPECT_LT(charged.replayed_step_ns, 10 * 50000 + 20000);
}

// A step's end: a 5 us cudaDeviceSynchronize at t, then the step's annotation from `begin` to 10 us later.
void endStep(TraceBuilder& b, int step, int64_t begin, int64_t& t, int64_t& corr) {
  b.add(EventKind::kRuntimeCall, TraceBuilder::kHost, "cudaDeviceSynchronize", t, t + 5000, corr++);
  t += 10000;
  b.step(step, begin, t);
}

// An in-process DataLoader's fetch: 100 CPU operators of 5 us inside next(), 1 us apart; then 20
// operators that launch a 1 us kernel each, and the sync.
RankTrace inProcessLoaderSteps() {
  TraceBuilder b;
  int64_t t = 1000, corr = 1;
  for (int step = 1; step <= 2; ++step) {
    const int64_t begin = t;
    const int64_t fetch = t;
    for (int k = 0; k < 100; ++k, t += 6000)
      b.add(EventKind::kHostOp, TraceBuilder::kHost, "aten::div", t + 1000, t + 6000);
    t += 1000;
    b.add(EventKind::kRange, TraceBuilder::kHost, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", fetch,
          t);
    for (int k = 0; k < 20; ++k, ++corr, t += 10000) {
      b.add(EventKind::kHostOp, TraceBuilder::kHost, "aten::mul", t, t + 9000);
      b.launch(corr, t + 2000, t + 6000, EventKind::kKernel, TraceBuilder::kStream7, "k", t + 8000, t + 9000);
    }
    endStep(b, step, begin, t, corr);
  }
  return b.done();
}

// The loader's operators cost the profiler what a CPU operator alone does, the others what an operator
// of a training step does.
TEST(Replay, AnInProcessLoadersOperatorsCostTheProfilerTheirOwn) {
  std::vector<RankTrace> v;
  v.push_back(inProcessLoaderSteps());
  auto run = analyzeRun(v, {});
  ASSERT_TRUE(run.ok());
  ReplayModel m(run.value());
  ReplayEdits ed;
  ed.host_event_overhead_ns = 1000;
  const Replay traced = m.replay(), same = m.replay(ed);
  ed.loader_event_overhead_ns = 200;
  const Replay own = m.replay(ed);
  ASSERT_TRUE(traced.available && same.available && own.available);
  // Host-bound: 101 events in the loader (its range and its operators) and 20 + 1 outside. At 1 us each
  // 122 us come off the step; with the loader's at 0.2 us, 101 x 0.8 us less.
  EXPECT_NEAR(traced.replayed_step_ns - same.replayed_step_ns, 122000, 3000);
  EXPECT_NEAR(own.replayed_step_ns - same.replayed_step_ns, 101 * 800, 3000);
  // The loader off the thread takes its 601 us and its events' cost with it, whatever that cost: the
  // others' 21 us still come off the rest.
  ReplayEdits off = ed, off_same = ed;
  off.loader_off_thread = off_same.loader_off_thread = true;
  off_same.loader_event_overhead_ns = -1;
  const Replay a = m.replay(off), b = m.replay(off_same);
  ASSERT_TRUE(a.available && b.available);
  EXPECT_DOUBLE_EQ(a.replayed_step_ns, b.replayed_step_ns);
  EXPECT_NEAR(traced.replayed_step_ns - a.replayed_step_ns, 601000 + 21000, 3000);
  // Graphed, the loader stays eager with all of its events' cost removed, at theirs.
  ReplayEdits graphed = ed, graphed_same = off_same;
  graphed.free_launches = graphed_same.free_launches = true;
  graphed_same.loader_off_thread = false;
  const Replay g = m.replay(graphed), gs = m.replay(graphed_same);
  ASSERT_TRUE(g.available && gs.available);
  EXPECT_NEAR(g.replayed_step_ns - gs.replayed_step_ns, 101 * 800, 3000);
}

// A training step as a model graphed alone sees it: 5 model operators that launch a 1 us kernel, the
// loss (a cross-entropy operator and the scale multiply, each launching, then 20 us of backward()'s
// call), its backward nodes (the multiply's, the loss's, the log-softmax's, each launching), and 5
// model backward nodes that launch, then the sync; each operator 9 us of a 10 us slot. `evaluation`:
// step 2's loss has no backward after it.
RankTrace lossSteps(bool evaluation = false) {
  TraceBuilder b;
  int64_t t = 1000, corr = 1;
  auto op = [&](std::string_view name) {
    b.add(EventKind::kHostOp, TraceBuilder::kHost, name, t, t + 9000);
    b.launch(corr, t + 2000, t + 6000, EventKind::kKernel, TraceBuilder::kStream7, "k", t + 8000, t + 9000);
    ++corr, t += 10000;
  };
  for (int step = 1; step <= 3; ++step) {
    const int64_t begin = t;
    for (int k = 0; k < 5; ++k) op("aten::linear");
    op("aten::cross_entropy_loss");
    if (!(evaluation && step == 2)) {
      op("aten::mul");
      t += 20000;
      op("autograd::engine::evaluate_function: MulBackward0");
      op("autograd::engine::evaluate_function: NllLossBackward0");
      op("autograd::engine::evaluate_function: LogSoftmaxBackward0");
      for (int k = 0; k < 5; ++k) op("autograd::engine::evaluate_function: MmBackward0");
    }
    endStep(b, step, begin, t, corr);
  }
  return b.done();
}

// The model graphed alone keeps the loss eager: its operators, the host time to the first backward
// node, and its backward nodes up to the log-softmax's, launches included.
TEST(Replay, AModelGraphedAloneKeepsTheLossEager) {
  std::vector<RankTrace> v;
  v.push_back(lossSteps());
  auto run = analyzeRun(v, {});
  ASSERT_TRUE(run.ok());
  ReplayModel m(run.value());
  ReplayEdits graphed;
  graphed.free_launches = graphed.graph_keeps_optimizer = true;
  Replay free = m.replay(graphed);
  graphed.graph_keeps_loss = true;
  Replay kept = m.replay(graphed);
  ASSERT_TRUE(free.available && kept.available);
  // The loss: 10 + 10 + 20 us to the first node, then 29 us of nodes stay on the host; at most the
  // step's 15 kernels of 1 us run under it.
  const double kept_ns = kept.replayed_step_ns - free.replayed_step_ns;
  EXPECT_GE(kept_ns, 69000 - 15000);
  EXPECT_LE(kept_ns, 69000 + 1000);
  // 15 operators a step, and the step's annotation.
  ASSERT_EQ(m.operatorsPerStep().size(), 1u);
  EXPECT_DOUBLE_EQ(m.operatorsPerStep()[0], 16);
}

// A loss with no backward after it in its step (an evaluation step) keeps nothing eager, nor does it
// take the next step's forward with it.
TEST(Replay, ALossWithoutABackwardKeepsNothing) {
  std::vector<RankTrace> a, b;
  a.push_back(lossSteps(false));
  b.push_back(lossSteps(true));
  auto ra = analyzeRun(a, {});
  auto rb = analyzeRun(b, {});
  ASSERT_TRUE(ra.ok() && rb.ok());
  ReplayEdits graphed;
  graphed.free_launches = graphed.graph_keeps_optimizer = true;
  ReplayEdits kept = graphed;
  kept.graph_keeps_loss = true;
  ReplayModel ma(ra.value()), mb(rb.value());
  // The training trace keeps the loss on each of its 3 steps; the one with an evaluation step on 2 of
  // them: two thirds as much a step in the mean, not the step after the evaluation's forward too.
  const auto keep = [&](const ReplayModel& m) {
    const Replay k = m.replay(kept), f = m.replay(graphed);
    EXPECT_TRUE(k.available && f.available);
    double sum = 0;  // over the steps
    for (size_t w = 0; w < k.ranks[0].windows.size(); ++w)
      sum += static_cast<double>(k.ranks[0].windows[w].replayed_ns - f.ranks[0].windows[w].replayed_ns);
    return sum;
  };
  const double keep_a = keep(ma), keep_b = keep(mb);
  EXPECT_GT(keep_a, 3 * 50000.0);
  EXPECT_NEAR(keep_b, keep_a * 2 / 3, 5000);
}

// A graphed step as the profiler records it: one cudaGraphLaunch of 100 kernels of 10 us, the
// first starting 200 us after the call does and every tenth 4 us after the one before (CUPTI
// instruments the nodes while the call submits them), the others 0.3 us apart; then the sync.
RankTrace graphedSteps() {
  TraceBuilder b;
  int64_t t = 1000;
  for (int step = 1; step <= 2; ++step, ++t) {
    const int64_t begin = t, corr = step;
    b.add(EventKind::kRuntimeCall, TraceBuilder::kHost, "cudaGraphLaunch", t + 1000, t + 301000, corr);
    int64_t k = t + 201000;
    for (int n = 0; n < 100; ++n) {
      b.add(EventKind::kKernel, TraceBuilder::kStream7, "graph_kernel", k, k + 10000, corr);
      k += 10000 + (n % 10 == 9 ? 4000 : 300);
    }
    b.add(EventKind::kRuntimeCall, TraceBuilder::kHost, "cudaDeviceSynchronize", t + 302000, k + 1000, 100 + step);
    t = k + 2000;
    b.step(step, begin, t);
  }
  return b.done();
}

// Without the profiler the graph's nodes follow the launch and each other at the GPU's pace: the
// wait from the call's start to each node, and the gaps between them, are capped.
TEST(Replay, AGraphsWorkFollowsItsLaunchWithoutTheProfiler) {
  std::vector<RankTrace> v;
  v.push_back(graphedSteps());
  auto run = analyzeRun(v, {});
  ASSERT_TRUE(run.ok());
  ReplayModel m(run.value());
  Replay traced = m.replay();
  ReplayEdits ed;
  ed.graph_node_overhead_ns = 2000;
  ed.graph_gap_cap_ns = 400;
  Replay un = m.replay(ed);
  ASSERT_TRUE(traced.available && un.available) << traced.reason << un.reason;
  EXPECT_LT(traced.worst_error, 1e-9);
  // Traced: 1 us to the call, 200 us to the first node, 100 x 10 us, 9 x 4 + 90 x 0.3 us between
  // them, and 6 us from the last node's end to the step's (the sync's end 5 us after it).
  EXPECT_NEAR(traced.replayed_step_ns, 1000 + 200000 + 1000000 + 36000 + 27000 + 6000, 1000);
  // Un-profiled: the first node 0.4 us after the call, the gaps 0.3 and 0.4 us.
  EXPECT_NEAR(un.replayed_step_ns, 1000 + 400 + 1000000 + 3600 + 27000 + 6000, 1000);
}

// K1 on stream 7, an event recorded after it, a stream wait, then (the host slow: 200 us later) K2
// on stream 13. With `overlap`, K2 starts while K1 still runs in the trace, so it waits for nothing.
RankTrace eventWaitSteps(bool overlap) {
  TraceBuilder b;
  int64_t t = 1000, corr = 1;
  for (int step = 1; step <= 2; ++step) {
    const int64_t begin = t;
    b.launch(corr++, t, t + 5000, EventKind::kKernel, TraceBuilder::kStream7, "k1", t + 7000, t + 107000);
    b.add(EventKind::kRuntimeCall, TraceBuilder::kHost, "cudaEventRecord", t + 6000, t + 7000, corr++);
    b.add(EventKind::kRuntimeCall, TraceBuilder::kHost, "cudaStreamWaitEvent", t + 8000, t + 9000, corr++);
    const int64_t call = overlap ? t + 10000 : t + 210000;
    b.launch(corr++, call, call + 5000, EventKind::kKernel, TraceBuilder::kStream13, "k2", call + 7000, call + 57000);
    const int64_t sync_end = std::max(t + 107000, call + 57000) + 3000;
    b.add(EventKind::kRuntimeCall, TraceBuilder::kHost, "cudaDeviceSynchronize", call + 6000, sync_end, corr++);
    t = sync_end + 5000;
    b.step(step, begin, t);
  }
  return b.done();
}

// Kineto records neither stream nor event of cudaEventRecord / cudaStreamWaitEvent: the wait is
// inferred from the calls (the work launched before the record, the work launched after the
// wait). In the trace the host's 200 us hide it; with the launches free it orders the streams.
TEST(Replay, AnEventWaitHoldsTheWaitingStreamOnceLaunchesAreFree) {
  for (bool overlap : {false, true}) {
    std::vector<RankTrace> v;
    v.push_back(eventWaitSteps(overlap));
    auto run = analyzeRun(v, {});
    ASSERT_TRUE(run.ok());
    ReplayModel m(run.value());
    Replay traced = m.replay();
    ASSERT_TRUE(traced.available) << traced.reason;
    EXPECT_LT(traced.worst_error, 1e-9);
    EXPECT_EQ(traced.stats.event_waits, overlap ? 0 : 2);
    ReplayEdits free;
    free.free_launches = true;
    Replay graphed = m.replay(free);
    // k2 (50 us) after k1 (100 us); where they overlapped in the trace, side by side.
    if (overlap)
      EXPECT_LT(graphed.replayed_step_ns, 120000);
    else
      EXPECT_GT(graphed.replayed_step_ns, 150000);
  }
}

// A CUDA graph's nodes on two streams, trickling out of the launch under the profiler: node B
// (stream 13) started after node A (stream 7) ended. Without the profiler B still waits for A.
TEST(Replay, AGraphsStreamsKeepTheirOrderWithoutTheProfiler) {
  TraceBuilder b;
  int64_t t = 1000;
  for (int step = 1; step <= 2; ++step) {
    const int64_t begin = t, corr = step;
    b.add(EventKind::kRuntimeCall, TraceBuilder::kHost, "cudaGraphLaunch", t + 1000, t + 5000, corr);
    b.add(EventKind::kKernel, TraceBuilder::kStream7, "node_a", t + 50000, t + 150000, corr);
    b.add(EventKind::kKernel, TraceBuilder::kStream13, "node_b", t + 190000, t + 240000, corr);
    b.add(EventKind::kRuntimeCall, TraceBuilder::kHost, "cudaDeviceSynchronize", t + 6000, t + 241000, 100 + step);
    t += 246000;
    b.step(step, begin, t);
  }
  std::vector<RankTrace> v;
  v.push_back(b.done());
  auto run = analyzeRun(v, {});
  ASSERT_TRUE(run.ok());
  ReplayModel m(run.value());
  Replay traced = m.replay();
  ASSERT_TRUE(traced.available) << traced.reason;
  EXPECT_LT(traced.worst_error, 1e-9);
  ReplayEdits ed;
  ed.graph_node_overhead_ns = 2000;
  ed.graph_gap_cap_ns = 400;
  // A (100 us) 0.4 us after the call, B (50 us) 0.4 us after A ends, then the sync and the step's
  // end: over 150 us, not the 107 us of the two streams side by side; the 40 us B waited under the
  // profiler are gone.
  const double un = m.replay(ed).replayed_step_ns;
  EXPECT_GT(un, 150000);
  EXPECT_LT(un, 160000);
}

// Autocast's casts on the host: in a host-bound step (the per-parameter optimizer job, its critical
// path all host) every cast's host time lands on the step.
TEST(Replay, AutocastCastsAddHostTimeWhereTheyRun) {
  auto l = load({"testdata/whatif/foreach_false_optimizer__base.pt.trace.json.gz"});
  const RankAnalysis& ra = l->run.ranks[0];
  double casts = 0;
  for (const CastSite& c : ra.autocast_casts) casts += c.casts;
  const double per_step = casts / static_cast<double>(ra.windows.size());
  ASSERT_GT(per_step, 100);
  ReplayModel m(l->run);
  Replay base = m.replay();
  ReplayEdits ed;
  ed.autocast_cast_ns = 10000;
  Replay with = m.replay(ed);
  ASSERT_TRUE(base.available && with.available);
  EXPECT_NEAR(with.replayed_step_ns - base.replayed_step_ns, per_step * 10000, 0.05 * per_step * 10000);
  // Graphed (CUDA graphs), the casts are kernels in the graph: no host time.
  ed.free_launches = true;
  ReplayEdits graphed;
  graphed.free_launches = true;
  EXPECT_NEAR(m.replay(ed).replayed_step_ns, m.replay(graphed).replayed_step_ns, 1);
}

// The critical path's parts add up to the replayed step, edited or not, and name what limits it.
TEST(Replay, CriticalPathPartsAddUpToTheStep) {
  auto sum = [](const Replay& r) {
    double s = 0;
    for (double v : r.path_ns) s += v;
    return s;
  };
  ReplayEdits half;
  half.kernel_scale.fill(0.5);
  Replay g = replayOf(syntheticSteps(20, 5000, 10000, 1000000));
  EXPECT_EQ(g.leading, PathCategory::kCompute);
  EXPECT_NEAR(sum(g), g.replayed_step_ns, 1);
  EXPECT_GT(g.path_ns[static_cast<size_t>(PathCategory::kCompute)], 0.9 * g.replayed_step_ns);
  Replay h = replayOf(syntheticSteps(50, 10000, 50000, 5000), half);
  EXPECT_EQ(h.leading, PathCategory::kHostLaunch);
  EXPECT_NEAR(sum(h), h.replayed_step_ns, 1);
  EXPECT_STREQ(std::string(pathCategoryName(PathCategory::kOtherIdle)).c_str(), "other_idle");
  // On real traces, each edit's parts add up too; one model replays many edits as replayRun does.
  for (const char* trace :
       {"testdata/whatif/loader_bound__bf16.pt.trace.json.gz", "testdata/whatif/item_sync__base.pt.trace.json.gz"}) {
    auto l = load({trace});
    ReplayModel model(l->run);
    ReplayEdits loader, nosync, graphs;
    loader.loader_off_thread = true;
    nosync.drop_sync_waits = true;
    graphs.free_launches = true;
    std::vector<Replay> all = model.replayAll({ReplayEdits{}, loader, nosync, graphs, half});
    for (size_t k = 0; k < all.size(); ++k) {
      ASSERT_TRUE(all[k].available) << trace;
      EXPECT_NEAR(sum(all[k]), all[k].replayed_step_ns, 1) << trace << " edit " << k;
    }
    EXPECT_EQ(replayRun(l->run, nosync).replayed_step_ns, all[2].replayed_step_ns);
  }
  // The loader-bound bf16 job: the loader (input) is a large part of its path; without it, not.
  auto l = load({"testdata/whatif/loader_bound__bf16.pt.trace.json.gz"});
  ReplayEdits off;
  off.loader_off_thread = true;
  Replay with = replayRun(l->run), without = replayRun(l->run, off);
  EXPECT_GT(with.path_ns[static_cast<size_t>(PathCategory::kInput)], 0.2 * with.replayed_step_ns);
  EXPECT_EQ(without.path_ns[static_cast<size_t>(PathCategory::kInput)], 0);
}

// Two steps of: a 5 ms kernel; a copy from pageable memory whose call waits for it; 3 ms of host
// work; a 5 ms kernel; a cudaStreamSynchronize that waits for it; 3 ms of host work; a 10 us
// kernel; the step's closing cudaDeviceSynchronize. `to_op`: the copy is an aten::to whose
// cudaMemcpyAsync returns at once and whose cudaStreamSynchronize then waits (PyTorch's .to("cuda")
// of pageable memory).
RankTrace copyThenSyncSteps(bool to_op = false) {
  TraceBuilder b;
  int64_t t = 1000, corr = 1;
  for (int step = 1; step <= 2; ++step) {
    const int64_t begin = t;
    int64_t a0 = t + 7000, a1 = a0 + 5000000;
    b.launch(corr++, t, t + 5000, EventKind::kKernel, TraceBuilder::kStream7, "my_gemm", a0, a1);
    if (to_op) {
      b.add(EventKind::kHostOp, TraceBuilder::kHost, "aten::to", t + 9000, a1 + 312000);
      b.launch(corr++, t + 10000, t + 20000, EventKind::kMemcpy, TraceBuilder::kStream7,
               "Memcpy HtoD (Pageable -> Device)", a1, a1 + 300000, 1 << 20);
      b.add(EventKind::kRuntimeCall, TraceBuilder::kHost, "cudaStreamSynchronize", t + 21000, a1 + 310000, corr++);
    } else {
      b.launch(corr++, t + 10000, a1 + 310000, EventKind::kMemcpy, TraceBuilder::kStream7,
               "Memcpy HtoD (Pageable -> Device)", a1, a1 + 300000, 1 << 20);
    }
    t = a1 + 312000;
    b.add(EventKind::kHostOp, TraceBuilder::kHost, "aten::host_work", t, t + 3000000);
    t += 3000000;
    const int64_t b0 = t + 7000, b1 = b0 + 5000000;
    b.launch(corr++, t, t + 5000, EventKind::kKernel, TraceBuilder::kStream7, "my_gemm", b0, b1);
    b.add(EventKind::kRuntimeCall, TraceBuilder::kHost, "cudaStreamSynchronize", t + 10000, b1 + 3000, corr++);
    t = b1 + 3000;
    b.add(EventKind::kHostOp, TraceBuilder::kHost, "aten::host_work", t, t + 3000000);
    t += 3000000;
    b.launch(corr++, t, t + 5000, EventKind::kKernel, TraceBuilder::kStream7, "my_gemm", t + 7000, t + 17000);
    b.add(EventKind::kRuntimeCall, TraceBuilder::kHost, "cudaDeviceSynchronize", t + 8000, t + 20000, corr++);
    t += 25000;
    b.step(step, begin, t);
  }
  return b.done();
}

TEST(Replay, PinnedCopiesDropTheCopiesWaitsAlone) {
  ReplayEdits copies, all;
  copies.drop_copy_waits = true;
  all.drop_sync_waits = true;
  for (bool to_op : {false, true}) {
    const Replay base = replayOf(copyThenSyncSteps(to_op));
    ASSERT_TRUE(base.available) << base.reason;
    EXPECT_LT(base.worst_error, 1e-9);
    // Traced: 5 + 0.3 + 3 + 5 + 3 ms and change. The copy's wait gone: the first 3 ms of host work
    // run under the first kernel; the stream sync still waits for the second. All waits gone: the
    // second 3 ms run under it too.
    const double s0 = base.replayed_step_ns, s1 = replayOf(copyThenSyncSteps(to_op), copies).replayed_step_ns,
                 s2 = replayOf(copyThenSyncSteps(to_op), all).replayed_step_ns;
    EXPECT_NEAR(s0 - s1, 3.0e6, 0.1e6) << "to_op " << to_op;
    EXPECT_NEAR(s1 - s2, 3.0e6, 0.1e6) << "to_op " << to_op;
  }
}

// Two ranks, each step one compute kernel then an allreduce that ends once both arrived (plus
// 100 us of transfer), then a synchronize. Rank 1's compute is `slow_ns`, rank 0's 1 ms.
RankTrace collectiveRank(int rank, int64_t compute_ns, int64_t slowest_ns, int64_t host_ns = 0,
                         int64_t slowest_host_ns = 0) {
  TraceBuilder b;
  b.t.rank = rank;
  int64_t t = 1000, corr = 1;
  for (int step = 1; step <= 2; ++step) {
    const int64_t begin = t;
    t += host_ns;  // host work before the step's first launch
    const int64_t k0 = t + 10000, ar_end = begin + slowest_host_ns + 10000 + slowest_ns + 100000;
    b.launch(corr++, t, t + 5000, EventKind::kKernel, TraceBuilder::kStream7, "my_gemm", k0, k0 + compute_ns);
    b.launch(corr++, t + 6000, t + 9000, EventKind::kKernel, TraceBuilder::kStream13,
             "ncclDevKernel_AllReduce_Sum_f32_RING_LL", k0 + compute_ns, ar_end);
    b.add(EventKind::kRuntimeCall, TraceBuilder::kHost, "cudaDeviceSynchronize", t + 10000, ar_end + 3000, corr++);
    if (host_ns > 0) b.add(EventKind::kHostOp, TraceBuilder::kHost, "aten::host_work", begin, begin + host_ns);
    t = ar_end + 8000;
    b.step(step, begin, t);
  }
  RankTrace r = b.done();
  const uint32_t pg = r.strings.intern("pg0");
  int64_t seq = 0;
  for (Event& e : r.events)
    if (r.strings.view(e.name).rfind("nccl", 0) == 0) {
      Collective c;
      c.process_group = pg;
      c.seq = seq++;
      r.collectives.push_back(c);
      e.collective = static_cast<uint32_t>(r.collectives.size());
    }
  return r;
}

std::vector<RankTrace> twoRanks(int64_t rank1_compute_ns) {
  std::vector<RankTrace> v;
  int64_t slowest = std::max<int64_t>(1000000, rank1_compute_ns);
  v.push_back(collectiveRank(0, 1000000, slowest));
  v.push_back(collectiveRank(1, rank1_compute_ns, slowest));
  return v;
}

// A straggler at its peer's pace: the replay of the job with the straggler, its compute scaled,
// is the job without it (the fast rank stops waiting in the allreduce).
TEST(Replay, AStragglerAtItsPeersPaceIsTheJobWithoutIt) {
  auto slow_traces = twoRanks(2000000), even_traces = twoRanks(1000000);
  auto slow = analyzeRun(slow_traces, {}), even = analyzeRun(even_traces, {});
  ASSERT_TRUE(slow.ok() && even.ok());
  Replay s0 = replayRun(slow.value());
  ASSERT_TRUE(s0.available) << s0.reason;
  EXPECT_LT(s0.worst_error, 1e-9);
  EXPECT_EQ(s0.stats.collective_groups, 2);
  ReplayEdits ed;
  ed.rank_compute_scale = {1.0, 0.5};
  Replay s = replayRun(slow.value(), ed), e = replayRun(even.value());
  EXPECT_NEAR(s.replayed_step_ns, e.traced_step_ns, 1000);
  EXPECT_NEAR(s.replayed_step_ns, s0.traced_step_ns - 1000000, 1000);
  for (const auto& rank : s.ranks)
    for (const auto& w : rank.windows) EXPECT_NEAR(w.replayed_ns, w.traced_ns - 1000000, 1000) << rank.rank;
}

// A straggler slow on the host (1 ms of host work a step before its launches): the what-if's
// straggler edit (its host time and compute at its peer's pace) predicts the job without it.
TEST(Replay, AHostStragglerAtItsPeersPaceIsAboutTheJobWithoutIt) {
  std::vector<RankTrace> slow_traces, even_traces;
  slow_traces.push_back(collectiveRank(0, 1000000, 1000000, 0, 1000000));
  slow_traces.push_back(collectiveRank(1, 1000000, 1000000, 1000000, 1000000));
  even_traces.push_back(collectiveRank(0, 1000000, 1000000));
  even_traces.push_back(collectiveRank(1, 1000000, 1000000));
  auto slow = analyzeRun(slow_traces, {}), even = analyzeRun(even_traces, {});
  ASSERT_TRUE(slow.ok() && even.ok());
  Replay s0 = replayRun(slow.value()), e = replayRun(even.value());
  ASSERT_TRUE(s0.available) << s0.reason;
  EXPECT_LT(s0.worst_error, 1e-9);
  EXPECT_NEAR(s0.traced_step_ns - e.traced_step_ns, 1000000, 1000);
  // Rank 1's own time 2.12 ms against rank 0's 1.12: both its host and its compute x 0.53.
  ReplayEdits ed;
  const double r = (s0.traced_step_ns - 1e6) / s0.traced_step_ns;
  ed.rank_host_scale = {1.0, r};
  ed.rank_compute_scale = {1.0, r};
  Replay s = replayRun(slow.value(), ed);
  EXPECT_NEAR(s.replayed_step_ns / e.traced_step_ns, 1.0, 0.10);
  EXPECT_LT(s.replayed_step_ns, s0.traced_step_ns - 0.8e6);
}

TEST(Replay, WhatItCannotModelIsUnavailableWithTheReason) {
  {  // GPU work without launch records
    TraceBuilder b;
    b.step(1, 1000, 100000);
    for (int k = 0; k < 10; ++k)
      b.add(EventKind::kKernel, TraceBuilder::kStream7, "my_gemm", 2000 + 5000 * k, 6000 + 5000 * k);
    Replay r = replayOf(b.done());
    EXPECT_FALSE(r.available);
    EXPECT_NE(r.reason.find("only 0% of the GPU work links to a recorded launch call"), std::string::npos) << r.reason;
  }
  {  // a step annotation that outlives everything recorded, to Kineto's Record Window End
    TraceBuilder b;
    b.launch(1, 2000, 3000, EventKind::kKernel, TraceBuilder::kStream7, "my_gemm", 4000, 9000);
    b.step(1, 1000, 13000000000);
    RankTrace t = b.done();
    t.record_window_end_ns = 13000000000;
    Replay r = replayOf(t);
    EXPECT_FALSE(r.available);
    EXPECT_NE(r.reason.find("step 1 ends"), std::string::npos) << r.reason;
  }
  {  // without the marker the step is cut at the last recorded event (findSteps), and replays exactly
    TraceBuilder b;
    b.launch(1, 2000, 3000, EventKind::kKernel, TraceBuilder::kStream7, "my_gemm", 4000, 9000);
    b.step(1, 1000, 13000000000);
    Replay r = replayOf(b.done());
    ASSERT_TRUE(r.available) << r.reason;
    EXPECT_DOUBLE_EQ(r.traced_step_ns, 8000);
    EXPECT_DOUBLE_EQ(r.replayed_step_ns, 8000);
  }
}

}  // namespace replay_test
}  // namespace gpudoctor
