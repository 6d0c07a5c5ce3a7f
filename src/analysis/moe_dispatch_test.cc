// Per-expert MoE dispatch: found by its structure (a block with a data-dependent sync and an expert's
// GEMMs, repeated per expert; its backward repeated as often), not confused with layers that sync,
// and the grouped dispatch's edit moves the step as the dependencies say: a host-bound loop gains,
// a GPU-bound one pays for the padding.
#include "analysis/moe_dispatch.h"

#include <gtest/gtest.h>

#include "analysis/replay/replay.h"
#include "analysis/run_test_util.h"
#include "analysis/trace_builder_test_util.h"

namespace gpudoctor {
namespace {

struct Shape {
  int experts = 8;
  int64_t host_op_ns = 30'000;  // each operator's host time
  int64_t gemm_ns = 10'000;     // each expert GEMM's GPU time
  const char* sync_op = "aten::nonzero";
  const char* inner_op = nullptr;  // an operator inside sync_op, around the sync (aten::where -> nonzero)
  int gemms_per_block = 2;
};

// Two steps; each: a forward loop of `experts` blocks [eq, <sync_op> (launches a count copy, then
// waits for it), linear x gemms_per_block, index_add_] on the main thread, then the backward's blocks
// [IndexAddBackward0, AddmmBackward0 x gemms_per_block] on a second thread.
RankTrace moeTrace(const Shape& s) {
  TraceBuilder b;
  b.t.tracks.push_back(Track{false, 100, 200, 0, 0});  // autograd's thread
  const uint32_t bwd = 3;
  int64_t t = 1000, corr = 1, gpu = 0;
  auto kernel = [&](uint32_t track, const char* name, int64_t dur) {
    const int64_t start = std::max(t + 3000, gpu);
    b.add(EventKind::kRuntimeCall, track, "cudaLaunchKernel", t + 1000, t + 3000, corr);
    b.add(EventKind::kKernel, TraceBuilder::kStream7, name, start, start + dur, corr);
    ++corr;
    gpu = start + dur;
  };
  auto op = [&](uint32_t track, const char* name, const char* kern, int64_t kern_ns) {
    b.add(EventKind::kHostOp, track, name, t, t + s.host_op_ns);
    if (kern) kernel(track, kern, kern_ns);
    t += s.host_op_ns + 2000;
  };
  for (int step = 1; step <= 2; ++step) {
    const int64_t step_begin = t;
    for (int e = 0; e < s.experts; ++e) {
      op(TraceBuilder::kHost, "aten::eq", "eq_kernel", 2000);
      // The sync: its operator launches the count's copy and waits for the GPU.
      const int64_t wait_end = std::max(t + s.host_op_ns, gpu + 5000);
      b.add(EventKind::kHostOp, TraceBuilder::kHost, s.sync_op, t, wait_end);
      if (s.inner_op) b.add(EventKind::kHostOp, TraceBuilder::kHost, s.inner_op, t + 500, wait_end - 500);
      kernel(TraceBuilder::kHost, "nonzero_count_kernel", 2000);
      b.add(EventKind::kRuntimeCall, TraceBuilder::kHost, "cudaStreamSynchronize", t + 4000, wait_end - 1000, corr++);
      t = wait_end + 2000;
      for (int g = 0; g < s.gemms_per_block; ++g)
        op(TraceBuilder::kHost, "aten::linear", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64",
           s.gemm_ns);
      op(TraceBuilder::kHost, "aten::index_add_", "index_add_kernel", 2000);
    }
    for (int e = 0; e < s.experts; ++e) {
      op(bwd, "autograd::engine::evaluate_function: IndexAddBackward0", "index_kernel", 2000);
      for (int g = 0; g < s.gemms_per_block; ++g)
        op(bwd, "autograd::engine::evaluate_function: AddmmBackward0",
           "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64", 2 * s.gemm_ns);
    }
    const int64_t sync_end = std::max(t, gpu) + 3000;
    b.add(EventKind::kRuntimeCall, TraceBuilder::kHost, "cudaDeviceSynchronize", t, sync_end, corr++);
    t = sync_end + 5000;
    b.step(step, step_begin, t);
  }
  return b.done();
}

struct Analyzed {
  std::vector<RankTrace> traces;
  RunAnalysis run;
};

std::unique_ptr<Analyzed> analyzed(const Shape& s) {
  auto a = std::make_unique<Analyzed>();
  a->traces.push_back(moeTrace(s));
  auto r = analyzeRun(a->traces, {});
  EXPECT_TRUE(r.ok()) << r.error().message;
  if (r.ok()) a->run = std::move(r.value());
  return a;
}

TEST(MoeDispatch, APerExpertLoopIsFoundForwardAndBackward) {
  auto a = analyzed({});
  ASSERT_EQ(a->run.ranks.size(), 1u);
  const MoeDispatch& m = a->run.ranks[0].moe;
  int forward = 0, backward = 0;
  for (const MoeLoop& l : m.loops) {
    EXPECT_EQ(l.experts, 8);
    if (l.backward) {
      ++backward;
      EXPECT_EQ(l.syncs, 0);
      EXPECT_EQ(l.ops_per_expert, 3);
    } else {
      ++forward;
      EXPECT_EQ(l.syncs, 8);
      EXPECT_EQ(l.ops_per_expert, 5);
      EXPECT_GT(l.sync_ns, 0);
    }
  }
  EXPECT_EQ(forward, 2);  // one per step
  EXPECT_EQ(backward, 2);
}

// Hugging Face's Mixtral/Qwen-MoE loop: a gated expert (three GEMMs) whose tokens come from
// torch.where(mask), a nonzero under aten::where.
TEST(MoeDispatch, AGatedExpertFoundThroughTorchWhere) {
  Shape gated;
  gated.gemms_per_block = 3;
  gated.sync_op = "aten::where";
  gated.inner_op = "aten::nonzero";
  const auto a = analyzed(gated);
  ASSERT_TRUE(a->run.ranks[0].moe.found());
  EXPECT_EQ(a->run.ranks[0].moe.loops.front().experts, 8);
  gated.inner_op = nullptr;  // the innermost operator around the sync decides: aten::where alone does not
  EXPECT_FALSE(analyzed(gated)->run.ranks[0].moe.found());
}

TEST(MoeDispatch, SyncsThatAreNotRoutingAndLayersAreNotExperts) {
  Shape item;
  item.sync_op = "aten::item";  // a value read back per block: no data-dependent size
  EXPECT_FALSE(analyzed(item)->run.ranks[0].moe.found());
  Shape layers;
  layers.gemms_per_block = 4;  // a transformer layer's GEMMs with a boolean mask each
  EXPECT_FALSE(analyzed(layers)->run.ranks[0].moe.found());
  Shape few;
  few.experts = kMoeMinExperts - 1;
  EXPECT_FALSE(analyzed(few)->run.ranks[0].moe.found());
}

double groupedSpeedup(const Shape& s) {
  auto a = analyzed(s);
  ReplayModel model(a->run);
  const Replay base = model.replay();
  ReplayEdits ed;
  ed.moe_blocks_kept = 2;
  ed.moe_gpu_scale = 1.25;
  const Replay grouped = model.replay(ed);
  EXPECT_TRUE(base.available && grouped.available) << base.reason;
  // Never below the GPU's own work after the edit.
  EXPECT_GE(grouped.replayed_step_ns, grouped.replayed.busy_ns * (1 - 1e-9));
  return base.replayed_step_ns / grouped.replayed_step_ns;
}

TEST(MoeDispatch, GroupingBuysWhatTheHostLosesAndCostsThePadding) {
  Shape host_bound;  // 30 us of host per operator, 10 us GEMMs: the syncs and launches set the step
  const double h = groupedSpeedup(host_bound);
  EXPECT_GT(h, 2.0);
  RecordProperty("host_bound", std::to_string(h));
  Shape gpu_bound;
  gpu_bound.gemm_ns = 2'000'000;  // 2 ms GEMMs: the padding costs up to 1.25x of the experts' work
  const double g = groupedSpeedup(gpu_bound);
  RecordProperty("gpu_bound", std::to_string(g));
  EXPECT_LT(g, 1.0);
  EXPECT_GT(g, 1 / 1.25 - 0.01);
}

}  // namespace
}  // namespace gpudoctor
