// Predictions on the measured validation set (testdata/whatif, docs/whatif_validation.md): each
// editable fix's predicted speedup against the speedup measured without the profiler, and the
// healthy job told nothing buys more than 5 %.
#include "diagnosis/what_if.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "analysis/run_test_util.h"
#include "analysis/trace_builder_test_util.h"
#include "diagnosis/diagnosis.h"
#include "diagnosis/fixes/bf16.h"
#include "diagnosis/fixes/cuda_graphs.h"
#include "diagnosis/fixes/fused_optimizer.h"
#include "diagnosis/fixes/no_checkpointing.h"
#include "diagnosis/fixes/sparse_embedding_grads.h"

namespace gpudoctor {
namespace what_if_test {
Diagnosis diagnoseJob(const std::string& trace, std::unique_ptr<testing::Loaded>& keep) {
  keep = testing::loadRun({testing::srcPath("testdata/whatif/" + trace + ".pt.trace.json.gz")});
  return diagnose(keep->run, Thresholds::defaults());
}

const Finding* finding(const Diagnosis& d, const std::string& id) {
  for (const auto& f : d.findings)
    if (f.id == id) return &f;
  return nullptr;
}

// The measured un-profiled step of testdata/whatif/measurements.json by job and variant: pass 2's
// re-timing (alone, right before the trace was recorded), as bench/replay_calibrate scores it.
double measuredNs(const std::string& job, const std::string& variant) {
  static const nlohmann::json m = [] {
    std::ifstream f(testing::srcPath("testdata/whatif/measurements.json"));
    return nlohmann::json::parse(f);
  }();
  for (const auto& e : m["entries"])
    if (e["job"] == job && e["variant"] == variant)
      return e.value("unprofiled_recheck_step_ns_median", e["unprofiled_step_ns_median"].get<double>());
  ADD_FAILURE() << "no measurement of " << job << "/" << variant;
  return 1;
}

// A DataLoader pool that sets the step, traced in steady state (testdata/lab/README.md: 3 workers
// decoding JPEGs for a bf16 ViT-B/16). The pool's bound is stated on the un-profiled step's basis, so
// the workers' prediction is given, not refused; measured: 6 workers 1.97x [1.95, 2.15], 12 workers
// 2.18x [2.12, 2.65].
TEST(WhatIf, ALoaderPoolThatSetsTheStepGetsItsWorkersPredicted) {
  auto keep = testing::loadRun({testing::srcPath("testdata/lab/vit_base_jpeg_workers3__base.pt.trace.json.gz")});
  const Diagnosis d = diagnose(keep->run, Thresholds::defaults());
  ASSERT_TRUE(d.what_if.available);
  EXPECT_EQ(d.what_if.unprofiled_parts.bound, "loader");
  const Finding* f = finding(d, "input.loader_on_critical_path");
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->what_if.available) << f->what_if.basis;
  EXPECT_EQ(f->severity, Severity::kCritical);
  EXPECT_NEAR(f->what_if.speedup, 1.97, 0.10 * 1.97);
  ASSERT_EQ(f->what_if.alternatives.size(), 1u);
  EXPECT_EQ(f->what_if.alternatives[0].fix, "loader_workers_x4");
  EXPECT_NEAR(f->what_if.alternatives[0].speedup, 2.18, 0.10 * 2.18);
  ASSERT_FALSE(d.plan.empty());
  EXPECT_EQ(d.plan.front().fix, "loader_workers");
}

// A pool of 2 JPEG-decoding workers that sets the step, although the traced training thread hardly
// waited in next() (4.3 ms of a 45.9 ms step, under the guide's 10 %): the profiler slowed the thread
// nearly to the pool's pace (testdata/lab/README.md: efficientnet_jpeg_workers2, H100; un-profiled
// 45.08 ms; 8 workers measured 1.54x). The replay sees the pool hold the un-profiled step, so the
// finding is there, critical, with the workers' prediction under its bound, and leads the plan.
TEST(WhatIf, APoolThatSetsTheUnprofiledStepIsFoundWhenTheTracedWaitsAreShort) {
  auto keep = testing::loadRun({testing::srcPath("testdata/lab/efficientnet_jpeg_workers2__base.pt.trace.json.gz")});
  const Diagnosis d = diagnose(keep->run, Thresholds::defaults());
  ASSERT_TRUE(d.what_if.available);
  EXPECT_EQ(d.what_if.unprofiled_parts.bound, "loader");
  EXPECT_NEAR(d.what_if.unprofiled_step_ns / 1e6, 45.08, 0.10 * 45.08);
  const Finding* f = finding(d, "input.loader_on_critical_path");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->title.rfind("The DataLoader's workers set the un-profiled step", 0), 0u) << f->title;  // the replay's
  EXPECT_NEAR(f->gain_share, 0.44, 0.05);  // the pool holds over 40 % of the step: well above the 10 % guide
  EXPECT_NE(f->gain_basis.find("un-profiled step"), std::string::npos) << f->gain_basis;
  EXPECT_EQ(f->severity, Severity::kCritical);
  ASSERT_TRUE(f->what_if.available) << f->what_if.basis;
  EXPECT_GT(f->what_if.speedup, 1.2);
  // The IO-wait check, judged on the traced waits, fails with it; the workers' check still passes.
  int io_wait = 0, workers = 0;
  for (const ChecklistItem& c : d.checklist) {
    if (c.item.rfind("IO wait", 0) == 0) {
      ++io_wait;
      EXPECT_EQ(c.status, CheckStatus::kFail) << c.evidence;
    }
    if (c.item.rfind("DataLoader workers", 0) == 0) {
      ++workers;
      EXPECT_EQ(c.status, CheckStatus::kPass) << c.evidence;
    }
  }
  EXPECT_EQ(io_wait, 1);
  EXPECT_EQ(workers, 1);
  const double saved_ms = (d.what_if.unprofiled_step_ns - f->what_if.step_ns) / 1e6;
  EXPECT_LE(saved_ms, f->gain_ms_per_step * 1.001);
  EXPECT_GE(f->what_if.step_ns, d.what_if.unprofiled_parts.busy_ns);
  ASSERT_FALSE(d.plan.empty());
  EXPECT_EQ(d.plan.front().fix, "loader_workers");
  // The share the pool must hold is the io_wait_max threshold's: at 60 %, the pool's 50 % is no finding.
  Thresholds lax = Thresholds::defaults();
  ASSERT_TRUE(lax.loadTomlText("io_wait_max = 0.6", "test").ok());
  EXPECT_EQ(finding(diagnose(keep->run, lax), "input.loader_on_critical_path"), nullptr);
}

// A finding's bound is what its fix can save at most: a measured saving above it makes it false. Two did
// that in the lab (testdata/lab/README.md): resnext50's channels_last saved at least 11.5 ms a step
// (1.33x) where the finding stated its transposes' 4.9 ms and refused the replay's own prediction for it;
// DLRM's fused AdamW saved at least 1.5 ms (1.38x [1.24, 1.65]) where the finding stated 0 (the optimizer's
// host time less half its kernels', for a step its kernels bound).
TEST(WhatIf, MeasuredSavingsStayUnderTheFindingsBounds) {
  struct Case {
    const char* trace;
    const char* finding;
    double least_saved_ms, measured_speedup;
  };
  for (const Case& c : {Case{"resnext50_fp32__base", "layout.channels_last", 11.50, 1.33},
                        Case{"dlrm_embeddingbag__base", "optimizer.unfused", 1.51, 1.38}}) {
    auto keep = testing::loadRun({testing::srcPath(std::string("testdata/lab/") + c.trace + ".pt.trace.json.gz")});
    const Diagnosis d = diagnose(keep->run, Thresholds::defaults());
    const Finding* f = finding(d, c.finding);
    ASSERT_NE(f, nullptr) << c.trace;
    EXPECT_GE(f->gain_ms_per_step, c.least_saved_ms) << c.trace << ": " << f->gain_basis;
    ASSERT_TRUE(f->what_if.available) << c.trace << ": " << f->what_if.basis;
    EXPECT_GT(f->what_if.speedup, 1.05) << c.trace;
    RecordProperty(c.trace, std::to_string(f->what_if.speedup) + " measured " + std::to_string(c.measured_speedup));
  }
}

// A materialized attention under bf16 autocast (testdata/lab/README.md: OPT, eager attention), whose
// score matrix is cast, masked and dropped out between the batched GEMMs: the fused kernel replaces all
// of that, so the finding's bound is restated from the replay's graph and the sdpa prediction is given,
// not refused (it was, against the rule's share of the attention-class kernels alone); measured 1.30x
// [1.29, 1.30].
TEST(WhatIf, AMaterializedAttentionsScoreMatrixIsInItsBound) {
  auto keep = testing::loadRun({testing::srcPath("testdata/lab/opt_eager_attention_bf16__base.pt.trace.json.gz")});
  const Diagnosis d = diagnose(keep->run, Thresholds::defaults());
  ASSERT_TRUE(d.what_if.available);
  const Finding* f = finding(d, "attention.materialized");
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->what_if.available) << f->what_if.basis;
  EXPECT_GT(f->what_if.speedup, 1.30 * 0.85);
  EXPECT_LT(f->what_if.speedup, 1.30 * 1.15);
  const double saved_ms = (d.what_if.unprofiled_step_ns - f->what_if.step_ns) / 1e6;
  EXPECT_LE(saved_ms, f->gain_ms_per_step * (1 + kBoundTolerance));
  ASSERT_FALSE(d.plan.empty());
  EXPECT_EQ(d.plan.front().fix, "sdpa");
}

// Under autocast a materialized attention's score-matrix kernels (scaling, masking, softmax,
// dropout) stay at their FP32 cost and gain casts around the FP32 softmax: bf16 scales them by
// kAutocastAttentionScoresScale, not by their classes' (the elementwise 0.85). In the GPU-bound FP32
// GPT-2 of testdata/whatif they are 2.15 ms a step (6.44 ms in 3 steps), on the critical path.
TEST(WhatIf, Bf16KeepsTheScoreMatrixsKernelsAndAddsItsCasts) {
  auto keep = testing::loadRun({testing::srcPath("testdata/whatif/hf_gpt2_eager_fp32__base.pt.trace.json.gz")});
  ReplayModel m(keep->run);
  ReplayEdits ed;
  const Replay as_traced = m.replay(ed);
  ed.attention_scores_scale = 2.0;
  const Replay doubled = m.replay(ed);
  ASSERT_TRUE(as_traced.available && doubled.available);
  EXPECT_NEAR(doubled.replayed_step_ns - as_traced.replayed_step_ns, 2.15e6, 0.3e6);
  std::string basis;
  ReplayEdits bf16;
  auto sheet = datasheetCeilings("NVIDIA H200");
  ASSERT_TRUE(sheet.has_value());
  ASSERT_TRUE(fixEdit("bf16", &*sheet, &keep->run, bf16, basis));
  EXPECT_EQ(bf16.attention_scores_scale, kAutocastAttentionScoresScale);
  EXPECT_NE(basis.find("score matrix's other kernels x 1.25"), std::string::npos) << basis;
}

// A cuDNN GRU in FP32 (testdata/lab/README.md): under autocast cuDNN runs the RNN in FP16, its TF32
// recurrent GEMMs at about a quarter of their time, far below the TF32/BF16 peaks' ratio the GEMM
// classes use. Measured 2.41x [2.22, 2.61]; predicted 1.90x when the RNN's kernels scaled as any
// TF32 GEMM. Its 2.18x once matched because two kernels on streams that run once a step kept their
// traced 28 ms wait as a fixed one, which held the GPU's period whatever bf16 did to the rest (the
// invariant HalvingTheGpuWorkNeverLengthensTheStep); waiting for the other streams instead, it is
// 3.05x: above the band by 17 % (the bf16 variant's trace, which would say what sets that step, is not
// kept). The bounds below are the measured band's low end and that known miss.
TEST(WhatIf, ACudnnRnnRunsInFp16UnderAutocast) {
  auto keep = testing::loadRun({testing::srcPath("testdata/lab/gru_lm_fp32__base.pt.trace.json.gz")});
  const Diagnosis d = diagnose(keep->run, Thresholds::defaults());
  const Finding* f = finding(d, "precision.fp32_gemm");
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->what_if.available) << f->what_if.basis;
  EXPECT_GE(f->what_if.speedup, 2.22);
  EXPECT_LE(f->what_if.speedup, 2.61 * 1.2);
}

// The held-out cuDNN LSTM on an H100 (testdata/lab/README.md): measured 2.73x [2.73, 2.74] with bf16;
// predicted 0.82x (slower) while its once-a-step streams kept their traced 35 ms waits.
TEST(WhatIf, AnLstmsOnceAStepStreamsFollowTheWorkTheyWaitFor) {
  auto keep = testing::loadRun({testing::srcPath("testdata/lab/lstm_lm_fp32__base.pt.trace.json.gz")});
  const Diagnosis d = diagnose(keep->run, Thresholds::defaults());
  const Finding* f = finding(d, "precision.fp32_gemm");
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->what_if.available) << f->what_if.basis;
  EXPECT_NEAR(f->what_if.speedup, 2.73, 0.10 * 2.73);
}

// An MoE LM whose two layers dispatch tokens expert by expert (testdata/lab/README.md: 8 experts, a
// nonzero sync each, FP32, GPU-bound). The per-expert loops are found and the grouped dispatch is
// predicted with its padding: measured 0.89x [0.89, 0.89] (a loss); bf16, measured best at 1.45x,
// stays first in the plan; the nonzero syncs are the MoE finding's, not the generic sync advice's.
TEST(WhatIf, APerExpertMoeDispatchIsPredictedWithItsPadding) {
  auto keep = testing::loadRun({testing::srcPath("testdata/lab/moe_top2_sync__base.pt.trace.json.gz")});
  const Diagnosis d = diagnose(keep->run, Thresholds::defaults());
  const Finding* f = finding(d, "moe.per_expert_dispatch");
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->what_if.available) << f->what_if.basis;
  EXPECT_NEAR(f->what_if.speedup, 0.89, 0.10 * 0.89);
  ASSERT_FALSE(d.plan.empty());
  EXPECT_EQ(d.plan.front().fix, "bf16");
  if (const Finding* s = finding(d, "sync.blocking")) {
    for (const auto& line : s->fix) EXPECT_EQ(line.find("torch.where(mask"), std::string::npos) << line;
  }
}

// A DLRM-like recommender (testdata/lab/README.md: 8 EmbeddingBag tables of 500k x 64 with dense
// gradients, AdamW foreach, on an H200 host). The dense tables are named with their bound, and sparse
// gradients are predicted to cost: 0.81x (the sparse path's host work per table, measured on an H100
// host, added where the host sets the step), measured 0.78x [0.74, 0.81]. The fused optimizer, measured
// best at 1.38x, leads the plan.
TEST(WhatIf, DenseEmbeddingGradientsAreNamedButTheMeasuredBestLeads) {
  auto keep = testing::loadRun({testing::srcPath("testdata/lab/dlrm_embeddingbag__base.pt.trace.json.gz")});
  const Diagnosis d = diagnose(keep->run, Thresholds::defaults());
  const Finding* f = finding(d, "embedding.dense_grads");
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->what_if.available) << f->what_if.basis;
  EXPECT_GE(f->what_if.speedup, 0.74);
  EXPECT_LE(f->what_if.speedup, 0.81 * 1.01);
  // Sparse gradients sync once a table: never planned with a graphed step.
  bool graphs = false, sparse = false;
  for (const auto& p : d.plan) graphs |= p.fix.starts_with("cuda_graphs"), sparse |= p.fix == "sparse_embedding_grads";
  EXPECT_FALSE(graphs && sparse);
  // The host sets this step: with the fills and the tables' update removed from the replayed graph it
  // stays within 5 %, so the bound says so and the finding is info.
  EXPECT_LT(f->gain_share, 0.05);
  EXPECT_EQ(f->severity, Severity::kInfo);
  EXPECT_NE(f->explanation.find("at most"), std::string::npos);
  const Finding* o = finding(d, "optimizer.unfused");
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->severity, Severity::kCritical);
  ASSERT_FALSE(d.plan.empty());
  EXPECT_EQ(d.plan.front().fix, "fused_optimizer");
}

// The same finding where the GPU sets the step (a hand-built trace: a dense table's 0.2 ms fill and
// 5 ms of foreach AdamW kernels a step, the host 0.3 ms): the bound stays what the rule states, and the
// prediction adds the sparse path's host work to what the GPU no longer does.
TEST(WhatIf, DenseEmbeddingGradientsOfAGpuBoundStepKeepTheirBound) {
  TraceBuilder b;
  int64_t t = 1000, corr = 1, gpu = 0;
  auto kernel = [&](const char* name, int64_t dur) {
    const int64_t start = std::max(t + 3000, gpu);
    b.launch(corr++, t + 1000, t + 3000, EventKind::kKernel, TraceBuilder::kStream7, name, start, start + dur);
    gpu = start + dur;
  };
  for (int step = 1; step <= 4; ++step) {
    const int64_t begin = t;
    b.add(EventKind::kHostOp, TraceBuilder::kHost, "aten::embedding_bag", t, t + 20000);
    kernel("EmbeddingBag_updateOutputKernel_sum_mean", 10000);
    t += 25000;
    b.add(EventKind::kHostOp, TraceBuilder::kHost, "aten::_embedding_bag_dense_backward", t, t + 40000);
    kernel("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>", 200000);
    t += 20000;
    kernel("compute_grad_weight_bags", 100000);
    t += 25000;
    b.add(EventKind::kRange, TraceBuilder::kHost, "Optimizer.step#AdamW.step", t, t + 60000);
    b.add(EventKind::kHostOp, TraceBuilder::kHost, "aten::_foreach_mul_", t + 5000, t + 50000);
    t += 5000;
    kernel("void at::native::multi_tensor_apply_kernel<TensorListMetadata<2>>", 5000000);
    t += 60000;
    const int64_t sync_end = std::max(t, gpu) + 3000;
    b.add(EventKind::kRuntimeCall, TraceBuilder::kHost, "cudaDeviceSynchronize", t, sync_end, corr++);
    t = sync_end + 5000;
    b.step(step, begin, t);
  }
  std::vector<RankTrace> traces;
  traces.push_back(b.done());
  auto run = analyzeRun(traces, {});
  ASSERT_TRUE(run.ok()) << run.error().message;
  const Diagnosis d = diagnose(run.value(), Thresholds::defaults());
  const Finding* f = finding(d, "embedding.dense_grads");
  ASSERT_NE(f, nullptr);
  EXPECT_GT(f->gain_ms_per_step, 4.5);  // the fill and the tables' update: the GPU's step
  ASSERT_TRUE(f->what_if.available) << f->what_if.basis;
  // The GPU's 5.2 ms a step gone but for the foreach kernels' other share; one table's host work added.
  EXPECT_GT(f->what_if.speedup, 1.05);
  EXPECT_GE(f->what_if.host_ns, kSparseEmbeddingTableNs);
  EXPECT_LE(d.what_if.unprofiled_step_ns - f->what_if.step_ns, f->gain_ms_per_step * 1e6 * 1.001);
}

// A fix's predicted speedup on the base trace against base / variant measured without the profiler.
struct Case {
  const char* job;
  const char* traced;  // the variant whose trace is diagnosed
  const char* fixed;   // the variant with the fix
  const char* finding;
  double max_error;  // the figure reached (the what-if issue asks for 25 % worst): a regression gate
};

TEST(WhatIf, PredictedFixesAgainstTheMeasuredOnes) {
  for (const Case& c : {Case{"item_sync", "base", "log_every_100", "sync.blocking", 0.20},
                        Case{"pageable_copies", "base", "pinned", "input.pageable_copies", 0.15},
                        Case{"gpt_fp32_naive", "base", "bf16", "precision.fp32_gemm", 0.25},
                        Case{"loader_bound", "bf16", "bf16+workers4", "input.loader_on_critical_path", 0.20},
                        Case{"gpt_launch_bound", "base", "cuda_graphs", "launch.overhead", 0.20},
                        Case{"foreach_false_optimizer", "base", "fused", "optimizer.unfused", 0.20},
                        Case{"mask_nonzero", "base", "bf16", "precision.fp32_gemm", 0.25},
                        Case{"gpt_fp32_naive", "base", "sdpa", "attention.materialized", 0.10},
                        Case{"activation_checkpointing", "base", "no_checkpointing", "memory.recomputation", 0.15}}) {
    std::unique_ptr<testing::Loaded> keep;
    const std::string name = std::string(c.job) + "__" + c.traced;
    Diagnosis d = diagnoseJob(name, keep);
    ASSERT_TRUE(d.what_if.available) << name << ": " << d.what_if.basis;
    EXPECT_EQ(d.what_if.replayed_step_ns, d.what_if.traced_step_ns) << name;
    const Finding* f = finding(d, c.finding);
    ASSERT_NE(f, nullptr) << name << " has no " << c.finding;
    ASSERT_TRUE(f->what_if.available) << name;
    const double measured = measuredNs(c.job, c.traced) / measuredNs(c.job, c.fixed);
    EXPECT_NEAR(f->what_if.speedup / measured, 1.0, c.max_error) << name << " " << c.finding;
    EXPECT_FALSE(f->what_if.basis.empty());
    EXPECT_FALSE(f->what_if.next_bottleneck.empty());
    // Graded by the prediction: every case here saves at least 10 % of the step.
    EXPECT_EQ(f->severity, f->what_if.speedup >= 1 / 0.9 ? Severity::kCritical : Severity::kWarning) << name;
  }
}

// loader_bound's bf16 trace: its in-process loader's bound is the GPU's idle inside next(), a mean over
// the steps; the step is the replay's median over them, and the two medians differ by more than the
// bound where the replay's steps differ by less in the mean. The prediction is that mean saving, under
// the bound, and says so.
TEST(WhatIf, ASavingOverTheBoundOnlyByTheMediansIsTheMeanSaving) {
  std::unique_ptr<testing::Loaded> keep;
  Diagnosis d = diagnoseJob("loader_bound__bf16", keep);
  ASSERT_TRUE(d.what_if.available) << d.what_if.basis;
  const Finding* f = finding(d, "input.loader_on_critical_path");
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->what_if.available) << f->what_if.basis;
  const double saved = static_cast<double>(d.what_if.unprofiled_step_ns - f->what_if.step_ns);
  EXPECT_GT(saved, 0);
  EXPECT_LE(saved, f->gain_ms_per_step * 1e6);
  EXPECT_NE(f->what_if.basis.find("the saving in the mean over the steps"), std::string::npos) << f->what_if.basis;
}

// CUDA graphs, two ways: the whole step captured (the prediction) and torch.compile's reduce-overhead
// mode, which graphs the model alone (the alternative). The held-out compile_graphs_bf16 measured
// 2.92x with the latter, where the whole step replays at 6.35x.
TEST(WhatIf, TorchCompileGraphsTheModelAloneAndBuysLess) {
  std::unique_ptr<testing::Loaded> keep;
  Diagnosis d = diagnoseJob("compile_graphs_bf16__base", keep);
  const Finding* f = finding(d, "launch.overhead");
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->what_if.available);
  ASSERT_EQ(f->what_if.alternatives.size(), 1u);
  const auto& alt = f->what_if.alternatives[0];
  EXPECT_EQ(alt.fix, "cuda_graphs_model");
  const double measured = measuredNs("compile_graphs_bf16", "base") / measuredNs("compile_graphs_bf16", "cuda_graphs");
  EXPECT_GT(f->what_if.speedup, 2 * measured);  // the whole step: not what this job did
  // The model alone: 2.67x, -15 % against the trace's process (3.15x), -9 % against the median over
  // processes (2.92x): the figure reached, as a regression gate.
  EXPECT_NEAR(alt.speedup / measured, 1.0, 0.2);
  EXPECT_LT(alt.step_ns, d.what_if.unprofiled_step_ns);
  EXPECT_NE(f->what_if.basis.find("reduce-overhead"), std::string::npos);
  // A GradScaler job's prediction is already the model alone graphed: no alternative.
  std::unique_ptr<testing::Loaded> keep2;
  Diagnosis g = diagnoseJob("grad_accum_fp16__base", keep2);
  const Finding* gf = finding(g, "launch.overhead");
  if (gf && gf->what_if.available) {
    EXPECT_TRUE(gf->what_if.alternatives.empty());
  }
}

// Without checkpointing, the non-reentrant wrapper's own host work goes too: at most its measured
// cost per checkpointed block, and only with the re-run forward it belongs to.
TEST(WhatIf, TheCheckpointWrapperLeavesWithTheRecompute) {
  auto l = testing::loadRun({testing::srcPath("testdata/whatif/activation_checkpointing__base.pt.trace.json.gz")});
  const RunAnalysis& run = l->run;
  ReplayEdits with = unprofiledEdits();
  std::string basis;
  ASSERT_TRUE(fixEdit("no_checkpointing", nullptr, &run, with, basis));
  EXPECT_EQ(with.checkpoint_block_ns, kCheckpointWrapperBlockNs);
  EXPECT_NE(basis.find("wrapper"), std::string::npos);
  ReplayEdits without = with;
  without.checkpoint_block_ns = 0;
  ReplayEdits wrapper_only = unprofiledEdits();
  wrapper_only.checkpoint_block_ns = kCheckpointWrapperBlockNs;  // no drop_recompute: nothing removed
  const ReplayModel model(run);
  const double base = model.replay(unprofiledEdits()).replayed_step_ns;
  const double a = model.replay(without).replayed_step_ns, b = model.replay(with).replayed_step_ns;
  EXPECT_LT(b, a);
  const double blocks_per_step = static_cast<double>(run.ranks[0].checkpoint.blocks()) / run.ranks[0].windows.size();
  EXPECT_LE(a - b, blocks_per_step * static_cast<double>(kCheckpointWrapperBlockNs) + 1);
  EXPECT_DOUBLE_EQ(model.replay(wrapper_only).replayed_step_ns, base);
  // A trace without checkpointing has nothing to edit.
  auto off = testing::loadRun(
      {testing::srcPath("testdata/whatif/activation_checkpointing__no_checkpointing.pt.trace.json.gz")});
  ReplayEdits none = unprofiledEdits();
  EXPECT_FALSE(fixEdit("no_checkpointing", nullptr, &off->run, none, basis));
}

TEST(WhatIf, TheHealthyJobIsPromisedNothing) {
  std::unique_ptr<testing::Loaded> keep;
  Diagnosis d = diagnoseJob("healthy__base", keep);
  ASSERT_TRUE(d.what_if.available);
  for (const auto& f : d.findings)
    if (f.what_if.available) {
      EXPECT_LE(f.what_if.speedup, 1.05) << f.id;
      EXPECT_EQ(f.severity, Severity::kInfo) << f.id;
    }
  // Un-profiled within the fitted model's reach of the measured step (this trace is the set's worst:
  // the profiler made the GPU-bound job host bound, 1.59x its un-profiled step).
  EXPECT_NEAR(d.what_if.unprofiled_step_ns / measuredNs("healthy", "base"), 1.0, 0.35);
}

// A step measured without the profiler anchors the un-profiled replay: the factor on the estimated
// profiler cost is found so that the replay matches it, the predictions start from it, and a step the
// trace cannot give (below its GPU's own work, above the traced step) is reported, not matched.
TEST(WhatIf, AMeasuredStepAnchorsTheProfilersCost) {
  auto l = testing::loadRun({testing::srcPath("testdata/whatif/ckpt_large__base.pt.trace.json.gz")});
  const ReplayModel model(l->run);
  const double estimated = model.replay(unprofiledEdits(&model)).replayed_step_ns;
  const double traced = model.replay().replayed_step_ns;
  for (double target : {estimated, 1.1 * estimated, 1.2 * estimated}) {
    ReplayEdits ed = unprofiledEdits(&model);
    const ProfilerAnchor a = anchorProfilerCost(model, target, ed);
    ASSERT_TRUE(a.reached) << target << ": " << a.note;
    EXPECT_NEAR(a.step_ns / target, 1.0, kAnchorTolerance);
    EXPECT_DOUBLE_EQ(model.replay(ed).replayed_step_ns, a.step_ns);  // `ed` holds the factor found
    if (target > estimated * (1 + kAnchorTolerance)) {
      EXPECT_LT(a.factor, 1.0);  // less removed: a longer step
    }
    if (target == estimated) {
      EXPECT_EQ(a.factor, 1.0);
    }
  }
  // Further than the host's speed explains: the factor stays within its range, and says so.
  ReplayEdits far = unprofiledEdits(&model);
  const ProfilerAnchor clamped = anchorProfilerCost(model, 0.5 * (estimated + traced), far);
  EXPECT_FALSE(clamped.reached);
  EXPECT_EQ(clamped.factor, 1 / kAnchorFactorRange);
  EXPECT_NE(clamped.note.find("beyond"), std::string::npos) << clamped.note;
  EXPECT_DOUBLE_EQ(model.replay(far).replayed_step_ns, clamped.step_ns);
  ReplayEdits below = unprofiledEdits(&model), above = unprofiledEdits(&model);
  const ProfilerAnchor lo = anchorProfilerCost(model, 0.1 * estimated, below);
  EXPECT_FALSE(lo.reached);
  EXPECT_EQ(lo.factor, kAnchorMaxFactor);
  EXPECT_NE(lo.note.find("below"), std::string::npos);
  const ProfilerAnchor hi = anchorProfilerCost(model, 2 * traced, above);
  EXPECT_FALSE(hi.reached);
  EXPECT_EQ(hi.factor, 0.0);
  EXPECT_NEAR(hi.step_ns / traced, 1.0, 0.001);  // its host cost kept: the traced step less CUPTI's GPU gaps
  // Through the diagnosis: the measured step (ckpt_large's own, 33.14 ms) moves the base and the
  // prediction of its fix with it; the estimate from the trace alone is 27 % short of it.
  const double measured = measuredNs("ckpt_large", "base");
  Diagnosis d = diagnose(l->run, Thresholds::defaults(), DiagnosisInputs{.measured_step_ns = measured});
  ASSERT_TRUE(d.what_if.anchored) << d.what_if.anchor_note;
  EXPECT_NEAR(d.what_if.unprofiled_step_ns / measured, 1.0, kAnchorTolerance);
  EXPECT_NE(d.what_if.basis.find("anchored to the measured"), std::string::npos);
  const Finding* f = finding(d, "memory.recomputation");
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->what_if.available);
  const double fixed = measured / measuredNs("ckpt_large", "no_checkpointing");
  EXPECT_NEAR(f->what_if.speedup / fixed, 1.0, 0.10);  // 1.49x against 1.58x; 1.18x from the trace alone
}

// The plan applies fixes one after another, the best first; each step gains, the speedups are
// cumulative and each names what leads afterwards.
TEST(WhatIf, ThePlanOrdersFixesByWhatTheyBuy) {
  std::unique_ptr<testing::Loaded> keep;
  Diagnosis d = diagnoseJob("loader_bound__base", keep);
  ASSERT_GE(d.plan.size(), 2u);
  EXPECT_EQ(d.plan[0].fix, "bf16");            // measured 2.10x; workers alone 1.00x
  EXPECT_EQ(d.plan[1].fix, "loader_workers");  // measured with bf16: 3.22x
  EXPECT_NEAR(d.plan[1].speedup / (measuredNs("loader_bound", "base") / measuredNs("loader_bound", "bf16+workers4")),
              1.0, 0.25);
  double last = 1;
  for (const auto& p : d.plan) {
    EXPECT_GT(p.speedup, last * 1.01) << p.fix;
    last = p.speedup;
    EXPECT_FALSE(p.next_bottleneck.empty());
    EXPECT_FALSE(p.finding.empty());
    EXPECT_NEAR(static_cast<double>(d.what_if.unprofiled_step_ns) / static_cast<double>(p.step_ns), p.speedup, 1e-3);
  }
  // The workers alone buy nothing while the FP32 kernels hide the loader: not a warning.
  for (const auto& f : d.findings)
    if (f.id == "input.loader_on_critical_path" && f.what_if.available) {
      EXPECT_LT(f.what_if.speedup, 1.05);
      EXPECT_EQ(f.severity, Severity::kInfo);
    }
  EXPECT_EQ(d.what_if.bottleneck, "compute");
  // The healthy job: no plan.
  Diagnosis h = diagnoseJob("healthy__base", keep);
  EXPECT_TRUE(h.plan.empty());
}

// Fixes the replay puts within 10 % of the best are listed beside it, not ranked below it: the token
// loader's workers and CUDA graphs (measured 1.90x and 2.28x, their bands overlapping) come out within
// a few percent of each other; a launch-bound GPT's CUDA graphs (measured 6.80x) lead alone.
TEST(WhatIf, FixesTheReplayCannotOrderAreListedBesideTheFirst) {
  std::unique_ptr<testing::Loaded> keep;
  Diagnosis d = diagnoseJob("token_loader_bf16__base", keep);
  ASSERT_FALSE(d.plan.empty());
  const PlanStep& first = d.plan.front();
  ASSERT_TRUE(first.fix == "cuda_graphs" || first.fix == "loader_workers") << first.fix;
  ASSERT_FALSE(first.within_accuracy.empty());
  EXPECT_EQ(first.within_accuracy.front().fix, first.fix == "cuda_graphs" ? "loader_workers" : "cuda_graphs");
  for (const auto& a : first.within_accuracy) {
    EXPECT_LE(static_cast<double>(a.step_ns), first.step_ns * (1 + kPlanTieShare) + 1) << a.fix;
    EXPECT_GE(a.step_ns, first.step_ns) << a.fix;
    EXPECT_NEAR(static_cast<double>(d.what_if.unprofiled_step_ns) / static_cast<double>(a.step_ns), a.speedup, 1e-3);
  }
  Diagnosis g = diagnoseJob("gpt_launch_bound__base", keep);
  ASSERT_FALSE(g.plan.empty());
  EXPECT_EQ(g.plan.front().fix, "cuda_graphs");
  EXPECT_TRUE(g.plan.front().within_accuracy.empty());
}

TEST(WhatIf, TheStragglerEditNeedsRanksAndASlowerOne) {
  ReplayEdits ed;
  std::string basis;
  EXPECT_FALSE(fixEdit("straggler_at_median", nullptr, nullptr, ed, basis));
  auto l = testing::loadRun({testing::srcPath("testdata/kineto/fp32_naive_rank0.pt.trace.json.gz"),
                             testing::srcPath("testdata/kineto/fp32_naive_rank1.pt.trace.json.gz")});
  ASSERT_TRUE(fixEdit("straggler_at_median", nullptr, &l->run, ed, basis));
  ASSERT_EQ(ed.rank_compute_scale.size(), 2u);
  EXPECT_LT(std::min(ed.rank_compute_scale[0], ed.rank_compute_scale[1]), 1.0);
  EXPECT_NE(basis.find("peers' median"), std::string::npos);
  Replay base = replayRun(l->run), fixed = replayRun(l->run, ed);
  ASSERT_TRUE(fixed.available);
  EXPECT_LE(fixed.replayed_step_ns, base.replayed_step_ns + 1000);
}

// CUDA graphs need capturable=True: a foreach Adam(W) step then computes beta ** step per parameter
// on the GPU (measured: 3.6 us a parameter and its kernels x 1.21), spread over its kernels; a loop
// gets its own per-kernel cost; a fused step nothing.
TEST(WhatIf, CapturingTheOptimizerCostsWhatItsImplementationAdds) {
  std::unique_ptr<testing::Loaded> keep;
  keep = testing::loadRun({testing::srcPath("testdata/whatif/gpt_launch_bound__base.pt.trace.json.gz")});
  const JobProfile& job = keep->run.job;
  ASSERT_EQ(job.optimizer_impl, "foreach");
  ASSERT_GT(job.param_tensors, 0);
  ReplayEdits ed;
  std::string basis;
  ASSERT_TRUE(fixEdit("cuda_graphs", nullptr, &keep->run, ed, basis));
  EXPECT_EQ(ed.optimizer_gpu_scale, kCapturableForeachGpuScale);
  EXPECT_EQ(ed.optimizer_kernel_add_ns,
            std::llround(job.param_tensors * kCapturableForeachParamNs / job.optimizer_launches_per_step));
  EXPECT_NE(basis.find("beta ** step per parameter"), std::string::npos) << basis;
  // The fused optimizer afterwards (a plan's next step) takes the capture's extra work away again.
  ASSERT_TRUE(fixEdit("fused_optimizer", nullptr, &keep->run, ed, basis));
  EXPECT_EQ(ed.optimizer_kernel_add_ns, 0);
  EXPECT_EQ(ed.optimizer_gpu_scale, kFusedAdamWGpuScale);
  // Graphed, the step gets longer than with free launches alone, by about the parameters' cost.
  ReplayEdits graphs = unprofiledEdits(), free = unprofiledEdits();
  ASSERT_TRUE(fixEdit("cuda_graphs", nullptr, &keep->run, graphs, basis));
  free.free_launches = true;
  const double with = replayRun(keep->run, graphs).replayed_step_ns,
               without = replayRun(keep->run, free).replayed_step_ns;
  EXPECT_GT(with - without, 0.8 * job.param_tensors * kCapturableForeachParamNs);
}

TEST(WhatIf, EditsNeedTheRatesTheyUse) {
  ReplayEdits ed;
  std::string basis;
  EXPECT_FALSE(fixEdit("bf16", nullptr, nullptr, ed, basis));
  auto sheet = datasheetCeilings("NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(sheet.has_value());
  EXPECT_FALSE(fixEdit("pinned_copies", nullptr, nullptr, ed, basis));  // no link rate at all
  ReplayEdits pinned;
  EXPECT_TRUE(fixEdit("pinned_copies", &*sheet, nullptr, pinned, basis));  // the link's rate is enough
  EXPECT_TRUE(fixEdit("bf16", &*sheet, nullptr, ed, basis));
  EXPECT_NEAR(ed.kernel_scale[static_cast<size_t>(KernelClass::kGemmFp32Simt)],
              67.0 / (989.5 * kBf16GemmEfficiency) + kAutocastCastShare, 1e-9);
  EXPECT_EQ(ed.kernel_floor_ns[static_cast<size_t>(KernelClass::kGemmFp32Simt)], kBf16GemmFloorNs);
  EXPECT_EQ(ed.kernel_scale[static_cast<size_t>(KernelClass::kOptimizer)], 1.0);  // FP32 master weights
  EXPECT_TRUE(fixEdit("sdpa", nullptr, nullptr, ed, basis));  // needs no rates: the GEMMs' math is kept
  EXPECT_TRUE(ed.fused_attention);
  EXPECT_FALSE(fixEdit("flash", &*sheet, nullptr, ed, basis));
  EXPECT_EQ(fixOfFinding("launch.overhead"), "cuda_graphs");
  EXPECT_EQ(fixOfFinding("bottleneck.compute"), "");
}

}  // namespace what_if_test
}  // namespace gpudoctor

namespace gpudoctor {
namespace {

// One step of 200 operators on the host, the host time before the k-th cycling through 1-4 us (the
// gaps' quarter-point 2 us), each with one launch; `option` adds what a profiler option records: a
// Python frame before each operator (with_stack) or each operator's input type (record_shapes).
std::vector<RankTrace> gappedStep(int option) {
  TraceBuilder b;
  int64_t t = 1000;
  for (int k = 0; k < 200; ++k) {
    t += 1000 * (1 + k % 4);
    if (option == 1) b.add(EventKind::kHostFunction, TraceBuilder::kHost, "nn.Module: Linear", t - 500, t + 3200);
    b.add(EventKind::kHostOp, TraceBuilder::kHost, "aten::mul", t, t + 3000);
    if (option == 2) b.t.events.back().dtype = b.t.strings.intern("float");
    t += 3000;
    b.launch(k + 1, t, t + 4000, EventKind::kKernel, TraceBuilder::kStream7, "my_mul", t + 6000, t + 7000);
    t += 4000;
  }
  b.step(1, 0, t + 10000);
  std::vector<RankTrace> v;
  v.push_back(b.done());
  return v;
}

}  // namespace

// The profiler's cost follows the host's speed as the gaps before operators read it. With the default
// options the gaps hold the dispatch and the profiler's per-event work alone: x gap^1.2. With with_stack
// or record_shapes they hold those options' own work too, and read the job as much as the host: the
// exponent fitted across jobs, 0.6, stays.
TEST(WhatIf, TheProfilersCostFollowsTheHostsSpeedByTheTracesOptions) {
  const double gap_us = 2.0;
  for (int option : {0, 1, 2}) {
    const std::vector<RankTrace> traces = gappedStep(option);  // the analysis points into them
    auto run = analyzeRun(traces, {});
    ASSERT_TRUE(run.ok()) << run.error().message;
    ReplayModel m(run.value());
    ASSERT_EQ(m.profilerOptionsInGaps().size(), 1u);
    EXPECT_EQ(m.profilerOptionsInGaps()[0], option != 0) << option;
    if (option != 1) {
      EXPECT_EQ(m.hostGapP25()[0], 2000) << option;
    }
    const std::vector<double> scale = profilerSpeedScale(m);
    ASSERT_EQ(scale.size(), 1u);
    const double gap = static_cast<double>(m.hostGapP25()[0]) / kProfilerSpeedRefNs;
    EXPECT_NEAR(scale[0], std::pow(gap, option == 0 ? kProfilerSpeedExponent : kProfilerSpeedExponentOptions), 1e-9)
        << option;
    if (option == 0) {
      EXPECT_NEAR(scale[0], std::pow(gap_us, 1.2), 1e-9);
    }
  }
}

}  // namespace gpudoctor
