// The whole pipeline (reader + analysis) on real traces made on 2 x H200 by scripts/testdata/make_traces.py.
// Exact figures below were cross-checked by scripts/checks/crosscheck_breakdown.py, an independent
// Python computation over the raw JSON; the rest are properties each scenario must show.
#include <gtest/gtest.h>

#include <string>

#include "analysis/run_test_util.h"

namespace gpudoctor {
namespace real_trace_test {
using testing::Loaded;
std::string src(const std::string& rel) { return testing::srcPath(rel); }
std::unique_ptr<Loaded> load(const std::vector<std::string>& paths) { return testing::loadRun(paths); }

void expectIdentities(const StepBreakdown& b) {
  EXPECT_EQ(b.wall_ns, b.compute_ns + b.comm_exposed_ns + b.copy_exposed_ns + b.idle_ns);
  EXPECT_EQ(b.idle_ns, b.idle_host_ns + b.idle_sync_ns + b.idle_dependency_ns + b.idle_other_ns);
  EXPECT_EQ(b.comm_ns, b.comm_overlap_ns + b.comm_exposed_ns);
  EXPECT_LE(b.gpu_busy_ns, b.wall_ns);
}

const KernelClassStats* cls(const KernelSummary& k, KernelClass c) {
  for (const auto& x : k.classes)
    if (x.cls == c) return &x;
  return nullptr;
}

// A sampled recording (record --sample): the last step of each attach window ends with its own
// work, not at the next window's first step 5 s later (testdata/record/torch_sampled.gdrec.gz).
TEST(RealTrace, SampledRecordingStepsDoNotSpanTheDetachedGap) {
  auto l = load({src("testdata/record/torch_sampled.gdrec.gz")});
  ASSERT_EQ(l->run.ranks.size(), 1u);
  const auto& r = l->run.ranks[0];
  ASSERT_GE(r.steps.size(), 6u);
  int64_t sum = 0;
  for (const auto& s : r.steps) {
    expectIdentities(s);
    EXPECT_LT(s.wall_ns, 25'000'000);  // the job's steps take 11-18 ms; the gap is 5 s
    sum += s.wall_ns;
  }
  EXPECT_LT(sum, r.windows.back().end_ns - r.windows.front().begin_ns);  // the gap is in no window
}

// Recordings have no framework operators: the framework comes from the kernels' names (issue 21:
// "framework unknown" on every recording), and a plain CUDA program names none.
TEST(RealTrace, RecordingsFrameworkFromKernelNames) {
  auto torch = load({src("testdata/record/torch_small.gdrec.gz")});
  auto jax = load({src("testdata/record/jax_small.gdrec.gz")});
  auto cuda = load({src("testdata/record/cuda_program.gdrec.gz")});
  ASSERT_FALSE(torch->run.ranks.empty() || jax->run.ranks.empty() || cuda->run.ranks.empty());
  EXPECT_EQ(torch->run.job.framework, "pytorch");
  EXPECT_EQ(jax->run.job.framework, "jax");
  EXPECT_EQ(cuda->run.job.framework, "");
  bool said = false;
  for (const auto& n : jax->run.job.notes) said |= n.find("XLA fusion kernels") != std::string::npos;
  EXPECT_TRUE(said);
  // A Kineto trace keeps its operators' word.
  auto ex = load({src("examples/ddp_bf16_flash")});
  EXPECT_EQ(ex->run.job.framework, "pytorch");
}

TEST(RealTrace, BundledExampleBf16FlashDdp) {
  auto l = load({src("examples/ddp_bf16_flash")});
  const auto& run = l->run;
  ASSERT_EQ(run.ranks.size(), 2u);
  EXPECT_EQ(run.ranks[0].trace->rank, 0);
  EXPECT_EQ(run.ranks[1].trace->rank, 1);
  EXPECT_EQ(run.ranks[0].trace->devices.at(0).name, "NVIDIA H200");
  for (const auto& r : run.ranks) {
    ASSERT_EQ(r.steps.size(), 2u);
    for (const auto& s : r.steps) expectIdentities(s);
  }
  // Exact, cross-checked figures of rank 0, step 2.
  const auto& s = run.ranks[0].steps[0];
  EXPECT_EQ(s.window.number, 2);
  EXPECT_EQ(s.wall_ns, 24892063);
  EXPECT_EQ(s.gpu_busy_ns, 3414211);
  EXPECT_EQ(s.compute_ns, 2934975);
  EXPECT_EQ(s.comm_ns, 348768);
  EXPECT_EQ(s.comm_exposed_ns, 346144);
  EXPECT_EQ(s.copy_exposed_ns, 133092);
  EXPECT_EQ(s.idle_ns, 21477852);
  EXPECT_EQ(s.launch_latency.count, 406);
  // Step windows tile: step 2 ends where step 3 starts.
  EXPECT_EQ(run.ranks[0].steps[0].window.end_ns, run.ranks[0].steps[1].window.begin_ns);
  // bf16 autocast + SDPA: bf16 GEMMs and fused attention, no FP32 SIMT GEMM, no materialized attention.
  EXPECT_NE(cls(run.kernels, KernelClass::kGemmBf16), nullptr);
  EXPECT_NE(cls(run.kernels, KernelClass::kAttentionFused), nullptr);
  EXPECT_EQ(cls(run.kernels, KernelClass::kGemmFp32Simt), nullptr);
  EXPECT_EQ(cls(run.kernels, KernelClass::kAttentionUnfused), nullptr);
  // DDP gradient buckets: fp32 allreduce over 2 ranks (bus factor 1).
  ASSERT_FALSE(run.collectives.empty());
  EXPECT_EQ(run.collectives[0].collective, "allreduce");
  EXPECT_EQ(run.collectives[0].group_size, 2);
  EXPECT_DOUBLE_EQ(run.collectives[0].busbw_gbps, run.collectives[0].algbw_gbps);
  // Pinned memory in the loader: host-to-device copies are pinned.
  EXPECT_GT(run.ranks[0].total.pinned_htod.count, 0);
  EXPECT_EQ(run.ranks[0].total.pageable_htod.count, 0);
  // Rank 0 (slower host) reaches every allreduce last; rank 1 waits inside NCCL.
  EXPECT_TRUE(run.straggler.matched);
  EXPECT_EQ(run.straggler.straggler, 0);
  EXPECT_EQ(run.straggler.collectives, 6);
  EXPECT_GT(run.ranks[1].total.comm_exposed_ns, 10 * run.ranks[0].total.comm_exposed_ns);
}

TEST(RealTrace, Fp32NaiveAttentionPageableLoader) {
  auto l = load({src("testdata/kineto/fp32_naive_rank0.pt.trace.json.gz")});
  const auto& r = l->run.ranks[0];
  for (const auto& s : r.steps) expectIdentities(s);
  EXPECT_EQ(r.steps[0].wall_ns, 36339164);
  EXPECT_EQ(r.steps[0].compute_ns, 13942641);
  EXPECT_EQ(r.steps[0].idle_ns, 21853620);
  // FP32 everywhere: the GEMMs are FP32 SIMT and the biggest class.
  ASSERT_FALSE(l->run.kernels.classes.empty());
  EXPECT_EQ(l->run.kernels.classes[0].cls, KernelClass::kGemmFp32Simt);
  EXPECT_EQ(cls(l->run.kernels, KernelClass::kGemmBf16), nullptr);
  // Hand-written attention: bmm + softmax kernels, no fused attention.
  EXPECT_NE(cls(l->run.kernels, KernelClass::kAttentionUnfused), nullptr);
  EXPECT_EQ(cls(l->run.kernels, KernelClass::kAttentionFused), nullptr);
  // pin_memory=False and a slow single-process loader on the host.
  EXPECT_GT(r.total.pageable_htod.count, 0);
  EXPECT_EQ(r.total.pinned_htod.count, 0);
  EXPECT_GT(r.total.dataloader_ns, 30'000'000);  // 2 steps x 8 samples x 2 ms sleep
  EXPECT_GT(r.total.idle_host_ns, r.total.idle_ns / 2);
}

// One rank of the bundled 2-rank DDP job: the run says which of the job's ranks it lacks; both
// ranks: no such note.
TEST(RealTrace, AMissingRankOfTheWorldIsNoted) {
  auto one = load({src("examples/ddp_bf16_flash/bf16_flash_rank0.pt.trace.json.gz")});
  auto noted = [](const RunAnalysis& run) {
    for (const auto& n : run.notes)
      if (n.find("1 of the job's 2 ranks have no trace here (missing: 1)") != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(noted(one->run));
  auto both = load({src("examples/ddp_bf16_flash")});
  EXPECT_FALSE(noted(both->run));
}

TEST(RealTrace, LaunchBoundTinyModel) {
  auto l = load({src("testdata/kineto/launch_bound_rank1.pt.trace.json.gz")});
  const auto& r = l->run.ranks[0];
  EXPECT_EQ(r.trace->rank, 1);
  for (const auto& s : r.steps) expectIdentities(s);
  // Many tiny kernels: the mean compute kernel is under 10 us, compute a small share of the step.
  int64_t n = 0, total = 0;
  for (const auto& c : l->run.kernels.classes)
    if (c.cls != KernelClass::kNccl) {
      n += c.dur.count;
      total += c.dur.total_ns;
    }
  ASSERT_GT(n, 500);
  EXPECT_LT(total / n, 10'000);
  EXPECT_LT(r.total.compute_ns * 10, r.total.wall_ns);
}

TEST(RealTrace, LoaderInProcessComesFromRoles) {
  // fp32_naive and launch_bound use DataLoader(num_workers=0); bf16_flash has loader workers.
  auto naive = load({src("testdata/kineto/fp32_naive_rank0.pt.trace.json.gz")});
  ASSERT_EQ(naive->run.ranks.size(), 1u);
  EXPECT_GT(naive->run.ranks[0].index.loader_in_process, 0u);
  EXPECT_FALSE(naive->run.ranks[0].index.dataloader.empty());
  auto flash = load({src("examples/ddp_bf16_flash")});
  for (const auto& r : flash->run.ranks) {
    EXPECT_EQ(r.index.loader_in_process, 0u);
    EXPECT_FALSE(r.index.dataloader.empty());
    EXPECT_EQ(r.index.step_annotations.size(), r.trace->step_marks.size());
  }
}

TEST(RealTrace, StepSelection) {
  auto files = expandTracePaths({src("examples/ddp_bf16_flash")});
  auto traces = readTraceSet(files.value());
  ASSERT_TRUE(traces.ok());
  AnalysisOptions opt;
  opt.steps = StepSelection::parse("3").value();
  auto run = analyzeRun(traces.value(), opt);
  ASSERT_TRUE(run.ok());
  ASSERT_EQ(run.value().ranks[0].steps.size(), 1u);
  EXPECT_EQ(run.value().ranks[0].steps[0].window.number, 3);
  opt.steps = StepSelection::parse("99").value();
  auto none = analyzeRun(traces.value(), opt);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("keeps none"), std::string::npos);
}

}  // namespace real_trace_test
}  // namespace gpudoctor
