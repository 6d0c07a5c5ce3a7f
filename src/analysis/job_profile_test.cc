// The job profile on real traces whose jobs are known: the what-if validation set (one H200,
// testdata/whatif, each job described in measurements.json and docs/whatif_validation.md) and the
// two-rank DDP traces of scripts/testdata/make_traces.py (testdata/kineto, examples/ddp_bf16_flash).
#include "analysis/job_profile.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "analysis/run_test_util.h"
#include "analysis/trace_builder_test_util.h"

namespace gpudoctor {
namespace job_profile_test {
using testing::Loaded;

// Each trace is read once for the whole suite.
const Loaded& load(const std::string& rel) {
  static std::map<std::string, std::unique_ptr<Loaded>> cache;
  auto& slot = cache[rel];
  if (!slot) slot = testing::loadRun({testing::srcPath(rel)});
  return *slot;
}
const JobProfile& job(const std::string& rel) { return load(rel).run.job; }
const JobProfile& whatif(const std::string& name) { return job("testdata/whatif/" + name + ".pt.trace.json.gz"); }

// The syncs of one operator (all callers and calls), per step.
double syncsPerStep(const JobProfile& p, const std::string& op, const std::string& caller = "*") {
  double n = 0;
  for (const auto& h : p.host_syncs)
    if (h.op == op && (caller == "*" || h.caller == caller)) n += h.count_per_step;
  return n;
}

TEST(JobProfile, HealthyJob) {
  // bf16 autocast, SDPA, fused AdamW, DataLoader with 2 workers and pinned memory, one GPU.
  const auto& p = whatif("healthy__base");
  EXPECT_EQ(p.framework, "pytorch");
  EXPECT_EQ(p.framework_version, "");  // Kineto records none
  EXPECT_EQ(p.precision, "bf16");
  EXPECT_GT(p.precision_shares.bf16, 0.95);
  EXPECT_EQ(p.autocast, std::optional<bool>(true));
  EXPECT_FALSE(p.grad_scaler);
  EXPECT_EQ(p.grad_accumulation_steps, std::optional<int>(1));
  EXPECT_EQ(p.data_parallel, "none");
  EXPECT_EQ(p.ranks, std::optional<int>(1));
  EXPECT_FALSE(p.torch_compile);
  EXPECT_FALSE(p.cuda_graphs);
  EXPECT_EQ(p.activation_checkpointing, std::optional<bool>(false));
  EXPECT_EQ(p.optimizer, "AdamW");
  EXPECT_EQ(p.optimizer_impl, "fused");
  EXPECT_TRUE(p.dataloader);
  EXPECT_EQ(p.loader_multiprocess, std::optional<bool>(true));
  EXPECT_EQ(p.loader_workers, std::nullopt);  // more than 0; the number is not in the trace
  EXPECT_EQ(p.pin_memory, std::optional<bool>(true));
  // Only the harness's closing torch.cuda.synchronize(): no operator syncs.
  ASSERT_EQ(p.host_syncs.size(), 1u);
  EXPECT_EQ(p.host_syncs[0].op, "");
  EXPECT_EQ(p.host_syncs[0].call, "cudaDeviceSynchronize");
  EXPECT_DOUBLE_EQ(p.host_syncs[0].count_per_step, 1.0);
  EXPECT_EQ(p.steps, 3);
}

TEST(JobProfile, ARecordingSaysWhatItCannotHold) {
  // gpudoctor record keeps kernels and CUDA calls, no framework operators: the optimizer and the
  // DataLoader are not "unknown" or "none" but not in the source, and the profile says so.
  const auto& p = job("testdata/record/torch_small.gdrec.gz");
  EXPECT_EQ(p.framework, "pytorch");  // from the ATen kernels' names
  for (const char* f : {"optimizer", "dataloader", "autocast", "grad_accumulation", "activation_checkpointing"})
    EXPECT_TRUE(p.notInSource(f)) << f;
  EXPECT_FALSE(p.dataloader);
  EXPECT_NE(std::find_if(p.notes.begin(), p.notes.end(),
                         [](const std::string& n) { return n.starts_with("not in this source:"); }),
            p.notes.end());
  EXPECT_TRUE(whatif("healthy__base").not_in_source.empty()) << "a profiler trace holds its operators";
}

TEST(JobProfile, GradAccumulationFp16WithScaler) {
  // 4 micro-batches per optimizer step, fp16 autocast + GradScaler, foreach AdamW (no record_shapes).
  const auto& p = whatif("grad_accum_fp16__base");
  EXPECT_EQ(p.precision, "fp16");
  EXPECT_EQ(p.autocast, std::optional<bool>(true));
  EXPECT_TRUE(p.grad_scaler);
  EXPECT_EQ(p.grad_accumulation_steps, std::optional<int>(4));
  EXPECT_DOUBLE_EQ(p.backward_passes_per_step, 4.0);
  EXPECT_DOUBLE_EQ(p.optimizer_steps_per_step, 1.0);
  EXPECT_EQ(p.optimizer, "AdamW");
  EXPECT_EQ(p.optimizer_impl, "foreach");
  EXPECT_FALSE(p.dataloader);
  EXPECT_EQ(p.activation_checkpointing, std::optional<bool>(false));
  // GradScaler's found_inf check is the one aten::item that syncs (AdamW's 56 CPU step counters do not).
  EXPECT_DOUBLE_EQ(syncsPerStep(p, "aten::item"), 1.0);
  EXPECT_DOUBLE_EQ(syncsPerStep(p, "aten::item", "GradScaler"), 1.0);
  for (const auto& h : p.host_syncs)
    if (h.op == "aten::item") {
      EXPECT_EQ(h.call, "cudaStreamSynchronize");
      EXPECT_EQ(h.copy, "DtoH");
      EXPECT_GT(h.host_ns_per_step, h.wait_ns_per_step);
    }

  const auto& bf16 = whatif("grad_accum_fp16__bf16_no_scaler");
  EXPECT_EQ(bf16.precision, "bf16");
  EXPECT_FALSE(bf16.grad_scaler);
  EXPECT_EQ(bf16.grad_accumulation_steps, std::optional<int>(4));
  EXPECT_DOUBLE_EQ(syncsPerStep(bf16, "aten::item"), 0.0);

  const auto& mb8 = whatif("grad_accum_fp16__microbatch8_no_accum");
  EXPECT_EQ(mb8.precision, "fp16");
  EXPECT_TRUE(mb8.grad_scaler);
  EXPECT_EQ(mb8.grad_accumulation_steps, std::optional<int>(1));
  EXPECT_EQ(whatif("grad_accum_fp16__bf16_no_scaler+microbatch8_no_accum").grad_accumulation_steps,
            std::optional<int>(1));
}

TEST(JobProfile, ActivationCheckpointing) {
  // torch.utils.checkpoint(use_reentrant=False) on every one of 4 blocks: the blocks' forward is
  // recomputed inside backward (embedding, head and loss are not).
  const auto& p = whatif("activation_checkpointing__base");
  EXPECT_EQ(p.activation_checkpointing, std::optional<bool>(true));
  ASSERT_TRUE(p.recompute_share.has_value());
  // 0.498, checked by an independent Python reading of the raw events: layer norms, attention, GELU
  // and the QKV/proj/fc1 GEMMs of the blocks again (fc2 is not: the recompute stops early).
  EXPECT_NEAR(*p.recompute_share, 0.50, 0.03);
  EXPECT_EQ(p.precision, "bf16");
  EXPECT_EQ(p.optimizer_impl, "fused");
  EXPECT_EQ(p.grad_accumulation_steps, std::optional<int>(1));

  const auto& off = whatif("activation_checkpointing__no_checkpointing");
  EXPECT_EQ(off.activation_checkpointing, std::optional<bool>(false));
  EXPECT_EQ(off.recompute_share, std::optional<double>(0.0));
  // Nothing else recomputes in the other jobs' backward passes either.
  for (auto name : {"healthy__base", "gpt_fp32_naive__base", "mask_nonzero__base", "resnet_fp32__base",
                    "foreach_false_optimizer__base", "grad_accum_fp16__base"})
    EXPECT_EQ(whatif(name).activation_checkpointing, std::optional<bool>(false)) << name;
}

TEST(JobProfile, CheckpointRegions) {
  // 4 checkpointed blocks x 3 steps: a re-run span per recomputing node, and the non-reentrant
  // wrapper's regions (12 _NoopSaveInputs entries in the steps, counted by a Python reading of the
  // raw events, and the nodes' time on either side of their re-run span).
  const RankAnalysis& ra = load("testdata/whatif/activation_checkpointing__base.pt.trace.json.gz").run.ranks[0];
  EXPECT_EQ(ra.checkpoint.blocks(), 12);
  ASSERT_EQ(ra.checkpoint.recompute.size(), 12u);
  EXPECT_GE(ra.checkpoint.wrapper.size(), 12u + 12u);
  EXPECT_LE(ra.checkpoint.wrapper.size(), 12u + 24u);
  for (size_t k = 1; k < ra.checkpoint.wrapper.size(); ++k)
    EXPECT_LE(ra.checkpoint.wrapper[k - 1].begin_ns, ra.checkpoint.wrapper[k].begin_ns);
  for (const HostRegion& w : ra.checkpoint.wrapper) {
    EXPECT_LT(w.begin_ns, w.end_ns);
    for (const HostRegion& r : ra.checkpoint.recompute) {  // never inside a re-run span
      if (r.track == w.track) {
        EXPECT_TRUE(w.end_ns <= r.begin_ns || w.begin_ns >= r.end_ns);
      }
    }
  }
  const RankAnalysis& off =
      load("testdata/whatif/activation_checkpointing__no_checkpointing.pt.trace.json.gz").run.ranks[0];
  EXPECT_EQ(off.checkpoint.blocks(), 0);
  EXPECT_TRUE(off.checkpoint.wrapper.empty());
}

TEST(JobProfile, AutocastCastSites) {
  // Where bf16 autocast would cast, read from each FP32 job's base trace, against the casts its bf16
  // variant's trace shows (a Python reading of the raw events, per step: top-level forward casts =
  // aten::_to_copy less those under ToCopyBackward0 nodes; backward casts = ToCopyBackward0 nodes).
  // The reading sees no residual add's promotion to FP32 nor a normalization's cast of a BF16 input,
  // so it may count fewer forward casts, never many more.
  struct Case {
    const char* job;
    double forward, backward;
  };
  for (const Case& c :
       {Case{"gpt_fp32_naive", 59, 51}, Case{"loader_bound", 51, 43}, Case{"pageable_copies", 8, 7},
        Case{"mask_nonzero", 99, 83}, Case{"foreach_false_optimizer", 200, 150}, Case{"resnet_fp32", 24, 23}}) {
    const RankAnalysis& ra = load(std::string("testdata/whatif/") + c.job + "__base.pt.trace.json.gz").run.ranks[0];
    ASSERT_FALSE(ra.autocast_casts.empty()) << c.job;
    // The forward sites are on the training thread, the backward ones on autograd's.
    const uint32_t main = ra.autocast_casts.front().track;
    double forward = 0, backward = 0;
    for (size_t k = 0; k < ra.autocast_casts.size(); ++k) {
      const CastSite& s = ra.autocast_casts[k];
      (s.track == main ? forward : backward) += s.casts;
      if (k > 0) {
        EXPECT_LE(ra.autocast_casts[k - 1].at_ns, s.at_ns) << c.job;
      }
    }
    const double steps = static_cast<double>(ra.windows.size());
    EXPECT_GE(forward / steps, 0.74 * c.forward) << c.job;
    EXPECT_LE(forward / steps, 1.05 * c.forward) << c.job;
    EXPECT_NEAR(backward, forward, 1e-6) << c.job;  // as many casts back
    EXPECT_GE(backward / steps, 0.8 * c.backward) << c.job;
    EXPECT_LE(backward / steps, 1.2 * c.backward) << c.job;
  }
  // Jobs already under autocast: nothing to add.
  for (const char* name : {"healthy__base", "grad_accum_fp16__base", "gpt_fp32_naive__bf16"})
    EXPECT_TRUE(load(std::string("testdata/whatif/") + name + ".pt.trace.json.gz").run.ranks[0].autocast_casts.empty())
        << name;
}

TEST(JobProfile, OptimizerImplementation) {
  // AdamW(foreach=False): 200 parameters, a per-parameter loop of ops; foreach=True; fused=True.
  const auto& loop = whatif("foreach_false_optimizer__base");
  EXPECT_EQ(loop.optimizer, "AdamW");
  EXPECT_EQ(loop.optimizer_impl, "loop");
  EXPECT_GE(loop.optimizer_launches_per_step, 1600.0);  // 8 kernels per parameter
  EXPECT_EQ(whatif("foreach_false_optimizer__foreach").optimizer_impl, "foreach");
  EXPECT_EQ(whatif("foreach_false_optimizer__fused").optimizer_impl, "fused");
  EXPECT_LT(whatif("foreach_false_optimizer__fused").optimizer_launches_per_step, 20.0);
  EXPECT_EQ(whatif("foreach_false_optimizer__bf16").optimizer_impl, "loop");
  EXPECT_EQ(whatif("resnet_fp32__base").optimizer, "SGD");
  EXPECT_EQ(whatif("resnet_fp32__base").optimizer_impl, "foreach");
  EXPECT_EQ(whatif("gpt_fp32_naive__fused").optimizer_impl, "fused");
  EXPECT_EQ(whatif("gpt_fp32_naive__base").optimizer_impl, "foreach");
  EXPECT_EQ(loop.precision, "fp32");
  EXPECT_EQ(loop.autocast, std::optional<bool>(false));
  // Parameters that receive gradients: one AccumulateGrad node each per backward pass (the deep narrow
  // net has 200 parameter tensors; four micro-batches a step count once).
  EXPECT_DOUBLE_EQ(loop.param_tensors, 200.0);
  EXPECT_DOUBLE_EQ(whatif("grad_accum_fp16__base").param_tensors,
                   whatif("grad_accum_fp16__microbatch8_no_accum").param_tensors);
}

// FP32 jobs whose convolutions or RNNs cuDNN runs in TF32 by default are FP32, not mixed precision:
// the lab's GRU language model (testdata/lab, 39 % of its GEMM time in cuDNN's TF32 RNN kernels), and
// an FP32 ResNet whose implicit-GEMM convolutions run in TF32.
TEST(JobProfile, Fp32WithCudnnTf32IsNotMixedPrecision) {
  const JobProfile& gru = job("testdata/lab/gru_lm_fp32__base.pt.trace.json.gz");
  EXPECT_EQ(gru.precision, "fp32");
  EXPECT_GT(gru.precision_shares.tf32, 0.3);
  EXPECT_LT(gru.precision_shares.bf16 + gru.precision_shares.fp16, 0.01);
  EXPECT_TRUE(std::any_of(gru.notes.begin(), gru.notes.end(),
                          [](const std::string& n) { return n.find("runs in TF32") != std::string::npos; }));
  EXPECT_FALSE(gru.autocast.value_or(false));
  // A bf16 autocast job stays bf16 (nothing of this rule).
  EXPECT_EQ(job("testdata/lab/opt_eager_attention_bf16__base.pt.trace.json.gz").precision, "bf16");
}

TEST(JobProfile, CudaGraphsHideTheOperators) {
  // The whole step (forward, backward, AdamW) captured in one torch.cuda.CUDAGraph and replayed.
  for (auto name : {"gpt_launch_bound__cuda_graphs", "gpt_launch_bound__cuda_graphs+bf16",
                    "foreach_false_optimizer__cuda_graphs"}) {
    const auto& p = whatif(name);
    EXPECT_TRUE(p.cuda_graphs) << name;
    EXPECT_EQ(p.grad_accumulation_steps, std::nullopt) << name;  // no autograd nodes, no optimizer range
    EXPECT_EQ(p.optimizer, "") << name;
    EXPECT_EQ(p.optimizer_impl, "") << name;
    EXPECT_EQ(p.activation_checkpointing, std::nullopt) << name;
    EXPECT_EQ(p.autocast, std::nullopt) << name;
    EXPECT_FALSE(p.torch_compile) << name;
  }
  // The kernel names still tell the precision.
  EXPECT_EQ(whatif("gpt_launch_bound__cuda_graphs").precision, "fp32");
  EXPECT_EQ(whatif("gpt_launch_bound__cuda_graphs+bf16").precision, "bf16");
  EXPECT_FALSE(whatif("gpt_launch_bound__base").cuda_graphs);
  EXPECT_FALSE(whatif("foreach_false_optimizer__base").cuda_graphs);
}

TEST(JobProfile, DataLoader) {
  const auto& in_process = whatif("loader_bound__base");  // num_workers=0, pin_memory=False
  EXPECT_TRUE(in_process.dataloader);
  EXPECT_EQ(in_process.loader_workers, std::optional<int>(0));
  EXPECT_EQ(in_process.loader_multiprocess, std::optional<bool>(false));
  EXPECT_EQ(in_process.pin_memory, std::optional<bool>(false));
  const auto& workers = whatif("loader_bound__workers4");  // 4 workers, pinned
  EXPECT_EQ(workers.loader_multiprocess, std::optional<bool>(true));
  EXPECT_EQ(workers.loader_workers, std::nullopt);
  EXPECT_EQ(workers.pin_memory, std::optional<bool>(true));
  EXPECT_EQ(whatif("loader_bound__bf16").loader_workers, std::optional<int>(0));
  EXPECT_EQ(whatif("loader_bound__bf16+workers4").loader_multiprocess, std::optional<bool>(true));
  // No DataLoader: batches already on the GPU (no copies at all) or copied by hand.
  const auto& none = whatif("foreach_false_optimizer__base");
  EXPECT_FALSE(none.dataloader);
  EXPECT_EQ(none.loader_workers, std::nullopt);
  EXPECT_EQ(none.pin_memory, std::nullopt);
  EXPECT_EQ(whatif("pageable_copies__base").pin_memory, std::optional<bool>(false));
  EXPECT_EQ(whatif("pageable_copies__pinned").pin_memory, std::optional<bool>(true));
}

TEST(JobProfile, HostSyncs) {
  // loss.item() every step: one real aten::item sync per step (DtoH + cudaStreamSynchronize).
  const auto& item = whatif("item_sync__base");
  EXPECT_DOUBLE_EQ(syncsPerStep(item, "aten::item"), 1.0);
  const HostSync* h = nullptr;
  for (const auto& x : item.host_syncs)
    if (x.op == "aten::item") h = &x;
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->call, "cudaStreamSynchronize");
  EXPECT_EQ(h->copy, "DtoH");
  EXPECT_EQ(h->caller, "");
  EXPECT_GE(h->host_ns_per_step, h->wait_ns_per_step);  // the wait is part of the operator's time
  EXPECT_GT(h->wait_ns_per_step, 0);
  EXPECT_DOUBLE_EQ(syncsPerStep(whatif("item_sync__log_every_100"), "aten::item"), 0.0);
  EXPECT_DOUBLE_EQ(syncsPerStep(whatif("item_sync__base__cuda_sync_events"), "aten::item"), 1.0);

  // x[mask] in 4 of 8 layers: aten::nonzero syncs in forward (under aten::index) and backward.
  const auto& mask = whatif("mask_nonzero__base");
  EXPECT_DOUBLE_EQ(syncsPerStep(mask, "aten::nonzero"), 8.0);
  EXPECT_DOUBLE_EQ(syncsPerStep(mask, "aten::nonzero", "aten::index"), 4.0);
  EXPECT_DOUBLE_EQ(syncsPerStep(mask, "aten::nonzero", "IndexBackward0"), 4.0);
  EXPECT_DOUBLE_EQ(syncsPerStep(whatif("mask_nonzero__where"), "aten::nonzero"), 0.0);

  // AdamW's CPU step counters call aten::item without syncing: 200 per step here, none listed.
  EXPECT_DOUBLE_EQ(syncsPerStep(whatif("foreach_false_optimizer__foreach"), "aten::item"), 0.0);
  EXPECT_DOUBLE_EQ(syncsPerStep(whatif("gpt_fp32_naive__base"), "aten::item"), 0.0);

  // A blocking .cuda() of pageable memory waits too.
  const auto& pageable = whatif("pageable_copies__base");
  bool found = false;
  for (const auto& x : pageable.host_syncs)
    if (x.op == "aten::to" && x.copy == "HtoD pageable") found = x.count_per_step == 2.0;
  EXPECT_TRUE(found);
}

TEST(JobProfile, Precision) {
  EXPECT_EQ(whatif("gpt_fp32_naive__base").precision, "fp32");
  EXPECT_EQ(whatif("gpt_fp32_naive__base").autocast, std::optional<bool>(false));
  EXPECT_EQ(whatif("gpt_fp32_naive__bf16").precision, "bf16");
  EXPECT_EQ(whatif("gpt_fp32_naive__bf16").autocast, std::optional<bool>(true));
  // FP32 model, cuDNN convolutions in TF32 (PyTorch's default allow_tf32 for cuDNN).
  EXPECT_EQ(whatif("resnet_fp32__base").precision, "tf32");
  EXPECT_EQ(whatif("resnet_fp32__bf16").precision, "bf16");
  EXPECT_EQ(whatif("mask_nonzero__bf16").precision, "bf16");
  EXPECT_EQ(whatif("loader_bound__base").precision, "fp32");
  EXPECT_EQ(whatif("item_sync__base").precision, "fp32");
  for (auto name : {"healthy__base", "gpt_fp32_naive__base", "resnet_fp32__base", "item_sync__base"})
    EXPECT_FALSE(whatif(name).grad_scaler) << name;
}

TEST(JobProfile, TwoRankDdp) {
  // scripts/testdata/make_traces.py: DDP on 2 GPUs; bf16_flash: bf16 autocast, fused AdamW, 2 workers pinned;
  // fp32_naive: FP32, foreach AdamW, 0 workers, pageable; launch_bound: FP32, foreach, 0 workers, pinned.
  const auto& flash = job("examples/ddp_bf16_flash");
  EXPECT_EQ(flash.data_parallel, "ddp");
  EXPECT_EQ(flash.data_parallel_basis, "DistributedDataParallel names");
  EXPECT_EQ(flash.ranks, std::optional<int>(2));
  EXPECT_EQ(flash.precision, "bf16");
  EXPECT_EQ(flash.autocast, std::optional<bool>(true));
  EXPECT_EQ(flash.optimizer_impl, "fused");
  EXPECT_EQ(flash.loader_multiprocess, std::optional<bool>(true));
  EXPECT_EQ(flash.pin_memory, std::optional<bool>(true));
  EXPECT_EQ(flash.grad_accumulation_steps, std::optional<int>(1));
  EXPECT_EQ(flash.activation_checkpointing, std::optional<bool>(false));
  EXPECT_EQ(flash.steps, 4);  // 2 ranks x 2 steps
  // The ranks agree: no per-rank difference noted.
  // The ranks agree on every field; rank 1 waits ~5 ms/step in DDP's forward, rank 0 0.03 ms.
  int differ = 0;
  for (const auto& n : flash.notes)
    if (n.rfind("ranks differ: ", 0) == 0) {
      ++differ;
      EXPECT_EQ(n.rfind("ranks differ: host sync cudaEventSynchronize in DistributedDataParallel.forward: ", 0), 0u)
          << n;
      EXPECT_NE(n.find("ms/step on rank 1, 0.03 ms/step on rank 0"), std::string::npos) << n;
    }
  EXPECT_EQ(differ, 1);
  double ddp_sync = 0;
  for (const auto& h : flash.host_syncs)
    if (h.call == "cudaEventSynchronize" && h.caller == "DistributedDataParallel.forward") ddp_sync = h.count_per_step;
  EXPECT_DOUBLE_EQ(ddp_sync, 8.0);

  const auto& naive = job("testdata/kineto/fp32_naive_rank0.pt.trace.json.gz");
  EXPECT_EQ(naive.data_parallel, "ddp");
  EXPECT_EQ(naive.ranks, std::optional<int>(2));  // from distributedInfo, one trace given
  EXPECT_EQ(naive.precision, "fp32");
  EXPECT_EQ(naive.optimizer_impl, "foreach");
  EXPECT_EQ(naive.loader_workers, std::optional<int>(0));
  EXPECT_EQ(naive.pin_memory, std::optional<bool>(false));
  const auto& launch = job("testdata/kineto/launch_bound_rank1.pt.trace.json.gz");
  EXPECT_EQ(launch.data_parallel, "ddp");
  EXPECT_EQ(launch.loader_workers, std::optional<int>(0));
  EXPECT_EQ(launch.pin_memory, std::optional<bool>(true));
}

TEST(JobProfile, MergeNotesRankDifferences) {
  JobProfile a, b;
  a.precision = "bf16";
  b.precision = "fp32";
  a.steps = b.steps = 2;
  a.host_syncs.push_back({"aten::item", "cudaStreamSynchronize", "", "DtoH", 1.0, 2e6, 1e6});
  JobProfile c = a;
  auto m = mergeJobProfiles({a, c, b}, {0, 1, 2});
  EXPECT_EQ(m.precision, "bf16");
  EXPECT_EQ(m.ranks, std::optional<int>(3));
  EXPECT_EQ(m.steps, 6);
  bool noted = false;
  for (const auto& n : m.notes) noted |= n == "ranks differ: precision: bf16 on most ranks; rank 2 fp32";
  EXPECT_TRUE(noted);
  ASSERT_EQ(m.host_syncs.size(), 1u);
  EXPECT_NEAR(m.host_syncs[0].count_per_step, 2.0 / 3.0, 1e-12);  // mean over the ranks
  EXPECT_NEAR(m.host_syncs[0].host_ns_per_step, 4e6 / 3.0, 1e-6);
}

// A top-level host operator of a hand-built step, and the operators it runs (each inside it, in order).
struct StepOp {
  const char* name;
  std::vector<const char*> children = {};
};

// One step of these top-level operators (1 us each, 1 us apart, one kernel launched after them),
// forward only: the step has no backward node.
Result<RunAnalysis> stepOf(const std::vector<StepOp>& ops) {
  TraceBuilder b;
  int64_t t = 1000;
  const int64_t begin = t;
  for (const StepOp& op : ops) {
    b.add(EventKind::kHostOp, TraceBuilder::kHost, op.name, t, t + 1000);
    int64_t c = t + 100;
    for (const char* child : op.children) b.add(EventKind::kHostOp, TraceBuilder::kHost, child, c, c + 200), c += 250;
    t += 2000;
  }
  b.launch(1, t, t + 500, EventKind::kKernel, TraceBuilder::kStream7, "my_gemm", t + 1000, t + 2000);
  t += 3000;
  b.step(1, begin, t);
  std::vector<RankTrace> v;
  v.push_back(b.done());
  return analyzeRun(v, {});
}

// The casts autocast would add to such a step.
double autocastCastsOf(const std::vector<StepOp>& ops) {
  auto run = stepOf(ops);
  EXPECT_TRUE(run.ok()) << run.error().message;
  if (!run.ok()) return -1;
  double casts = 0;
  for (const CastSite& c : run.value().ranks[0].autocast_casts) casts += c.casts;
  return casts;
}

// A hand-built transformer block's forward under FP32: a norm's FP32 output read by three GEMMs with only
// views between them (q, k and v each cast it), attention over their BF16 outputs (nothing to cast), the
// output projection and the MLP's second linear on BF16 inputs (their weights only), and a GPT-2 Conv1D
// (a top-level aten::addmm: its bias and weight). 2 + 2 + 2 + 0 + 1 + 1 + 2 casts.
TEST(JobProfile, AutocastCastsOfGemmsThatReadOneInput) {
  EXPECT_DOUBLE_EQ(autocastCastsOf({{"aten::layer_norm"},
                                    {"aten::linear"},
                                    {"aten::view"},
                                    {"aten::linear"},
                                    {"aten::view"},
                                    {"aten::linear"},
                                    {"aten::transpose"},
                                    {"aten::scaled_dot_product_attention"},
                                    {"aten::linear"},
                                    {"aten::gelu"},
                                    {"aten::linear"},
                                    {"aten::addmm"}}),
                   10.0);
}

// Explicit casts that do nothing in FP32 (`.float()` on a GEMM's output: aten::to with no copy under it)
// cast the BF16 activation under autocast; one after an FP32-list operator, or one that already copies
// in FP32 (aten::_to_copy under it), adds none.
TEST(JobProfile, ExplicitCastsOfLowerPrecisionActivations) {
  EXPECT_DOUBLE_EQ(autocastCastsOf({{"aten::mm"},                        // 2 inputs, FP32 data: 2 casts
                                    {"aten::to"},                        // .float() of its BF16 output: 1
                                    {"aten::softmax"},                   // FP32 list
                                    {"aten::to"},                        // FP32 already: none
                                    {"aten::mm"},                        // reads the FP32 softmax: 2
                                    {"aten::to", {"aten::_to_copy"}}}),  // copies in FP32 too: none
                   5.0);
}

// A convolution casts its weight, its FP32 input and, where cuDNN's output gets it added (aten::add_
// under the operator), its bias: 3, then 2 for the next one on the BF16 activation (a ReLU between), 1
// without a bias.
TEST(JobProfile, AutocastCastsAConvolutionsBias) {
  EXPECT_DOUBLE_EQ(autocastCastsOf({{"aten::conv2d", {"aten::cudnn_convolution", "aten::add_"}},
                                    {"aten::relu"},
                                    {"aten::conv2d", {"aten::cudnn_convolution", "aten::add_"}},
                                    {"aten::relu"},
                                    {"aten::conv2d", {"aten::cudnn_convolution"}},
                                    {"aten::relu"}}),
                   6.0);
}

// scaled_dot_product_attention calls, each once (autocast's re-dispatch under the same name is the
// same call), and those that ran the math backend, as the lab's T5 and diffusion UNet traces show it:
// aten::_scaled_dot_product_attention_math under the call.
TEST(JobProfile, SdpaCallsThatRanTheMathBackend) {
  auto run = stepOf({{"aten::scaled_dot_product_attention", {"aten::_scaled_dot_product_attention_math"}},
                     {"aten::scaled_dot_product_attention", {"aten::_scaled_dot_product_efficient_attention"}},
                     {"aten::scaled_dot_product_attention", {"aten::scaled_dot_product_attention"}},
                     {"aten::scaled_dot_product_attention", {"aten::_scaled_dot_product_attention_math"}}});
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_DOUBLE_EQ(run.value().job.sdpa_calls_per_step, 4.0);
  EXPECT_DOUBLE_EQ(run.value().job.sdpa_math_calls_per_step, 2.0);
  // A math-backend operator alone is not an SDPA call of the job's.
  auto alone = stepOf({{"aten::_scaled_dot_product_attention_math"}});
  ASSERT_TRUE(alone.ok()) << alone.error().message;
  EXPECT_DOUBLE_EQ(alone.value().job.sdpa_math_calls_per_step, 0.0);
  EXPECT_DOUBLE_EQ(whatif("hf_gpt2_eager_fp32__base").sdpa_calls_per_step, 0.0);  // attention by hand
  const JobProfile& fused = whatif("hf_gpt2_eager_fp32__sdpa");                   // the memory-efficient kernel
  EXPECT_GT(fused.sdpa_calls_per_step, 0.0);
  EXPECT_DOUBLE_EQ(fused.sdpa_math_calls_per_step, 0.0);
}

}  // namespace job_profile_test
}  // namespace gpudoctor
