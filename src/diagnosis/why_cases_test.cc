// Issue 18's "Why" cases, each on a trace of our own (testdata/whatif from scripts/validation/whatif_jobs.py,
// testdata/cases from scripts/testdata/case_jobs.py; both recorded on an H200): the job profile says what the
// job does, and the leading finding and its fix are the right ones (the plan's first fix is the one
// that measured best where the fix was measured: testdata/whatif/measurements.json).
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <set>
#include <string>

#include "analysis/run_test_util.h"
#include "diagnosis/diagnosis.h"
#include "diagnosis/facts.h"

namespace gpudoctor {
namespace why_cases_test {
struct Case {
  std::unique_ptr<testing::Loaded> l;
  Diagnosis d;
  const JobProfile& job() const { return l->run.job; }
  // The first finding after the headline (the primary bottleneck).
  const Finding& leading() const { return d.findings.size() > 1 ? d.findings[1] : d.findings.front(); }
  const Finding* find(std::string_view id) const {
    for (const auto& f : d.findings)
      if (f.id == id) return &f;
    return nullptr;
  }
  std::string firstPlanFix() const { return d.plan.empty() ? "" : d.plan.front().fix; }
};

Case load(const std::string& rel) {
  Case c;
  c.l = testing::loadRun({testing::srcPath(rel)});
  c.d = diagnose(c.l->run, Thresholds::defaults());
  return c;
}

std::string fixText(const Finding& f) {
  std::string s;
  for (const auto& l : f.fix) s += l + "\n";
  return s;
}

std::string allFixes(const Diagnosis& d) {
  std::string s;
  for (const auto& f : d.findings) s += fixText(f);
  return s;
}

// loss.item() every step, then ~10 ms of Python: the host leads (was "compute 33 %" with no sync
// finding), named as two causes: the sync, and the host's own work that the sync keeps from
// overlapping the GPU. Both are in the plan.
TEST(WhyCases, LossItemEveryStepIsNamedAsTheSync) {
  Case c = load("testdata/whatif/item_sync__base.pt.trace.json.gz");
  ASSERT_FALSE(c.job().host_syncs.empty());
  EXPECT_EQ(c.job().host_syncs.front().op, "aten::item");
  EXPECT_EQ(groupOf(c.d.primary), "host");
  const Finding* sync = nullptr;
  for (const auto& f : c.d.findings)
    if (f.id == "sync.blocking") sync = &f;
  ASSERT_NE(sync, nullptr);
  EXPECT_NE(sync->title.find("aten::item"), std::string::npos) << sync->title;
  EXPECT_NE(fixText(*sync).find("every"), std::string::npos) << fixText(*sync);
  ASSERT_TRUE(sync->what_if.available) << sync->what_if.basis;
  EXPECT_GT(sync->what_if.speedup, 1.2);                // measured 1.49x (log every 100 steps)
  EXPECT_EQ(c.firstPlanFix(), "host_work_off_thread");  // once it is off the thread, the sync costs little
}

// Boolean-mask indexing: a hidden nonzero sync every other layer. Was "launch-bound"; now compute
// leads (bf16 measured 1.71x, torch.where 1.09x) and the nonzero sync is named with torch.where.
TEST(WhyCases, MaskIndexingNonzeroIsNamedWithTheWhereFix) {
  Case c = load("testdata/whatif/mask_nonzero__base.pt.trace.json.gz");
  bool nonzero = false;
  for (const auto& h : c.job().host_syncs) nonzero |= h.op == "aten::nonzero";
  EXPECT_TRUE(nonzero);
  EXPECT_EQ(c.d.primary, "compute");
  EXPECT_EQ(c.firstPlanFix(), "bf16");
  EXPECT_EQ(c.leading().id, "precision.fp32_gemm");
  const Finding* s = c.find("sync.blocking");
  ASSERT_NE(s, nullptr);
  EXPECT_NE(s->title.find("aten::nonzero"), std::string::npos) << s->title;
  EXPECT_NE(fixText(*s).find("torch.where"), std::string::npos) << fixText(*s);
}

// FSDP (FSDP1 and FSDP2 at world size 1): profiled as FSDP, never told DDP's bucket_cap_mb /
// no_sync, nor CUDA graphs its hooks cannot be captured into.
TEST(WhyCases, FsdpJobsGetNoDdpOrGraphAdvice) {
  for (const char* t : {"testdata/cases/fsdp1.pt.trace.json.gz", "testdata/cases/fsdp2.pt.trace.json.gz"}) {
    Case c = load(t);
    EXPECT_EQ(c.job().data_parallel, "fsdp") << t;
    const std::string fixes = allFixes(c.d);
    for (const char* bad : {"DDP(", "bucket_cap_mb", "no_sync", "CUDAGraph", "reduce-overhead"})
      EXPECT_EQ(fixes.find(bad), std::string::npos) << t << ": " << bad;
    EXPECT_EQ(c.d.primary, "host_launch") << t;  // one GPU, small model: the host's launches
    for (const auto& p : c.d.plan) EXPECT_NE(p.fix, "cuda_graphs") << t;
    const Finding* l = c.find("launch.overhead");
    ASSERT_NE(l, nullptr) << t;
    EXPECT_NE(fixText(*l).find("torch.compile(block)"), std::string::npos) << fixText(*l);
  }
}

// Activation checkpointing with memory to spare: the recomputation leads, predicted by the replay
// (measured 1.35x without checkpointing).
TEST(WhyCases, CheckpointingWithMemoryToSpareLeads) {
  Case c = load("testdata/whatif/activation_checkpointing__base.pt.trace.json.gz");
  ASSERT_TRUE(c.job().activation_checkpointing.value_or(false));
  EXPECT_NEAR(c.job().recompute_share.value_or(0), 0.5, 0.1);
  EXPECT_EQ(c.leading().id, "memory.recomputation");
  EXPECT_TRUE(c.leading().what_if.available);
  EXPECT_GT(c.leading().what_if.speedup, 1.05);
  EXPECT_EQ(c.firstPlanFix(), "no_checkpointing");
}

// 4-step accumulation at micro-batch 2 with fp16 + GradScaler: accumulation leads (measured 3.24x
// for one micro-batch of 8), and bf16 without the scaler is said; not "launch-bound, try torch.compile".
TEST(WhyCases, SmallMicroBatchAccumulationLeads) {
  Case c = load("testdata/whatif/grad_accum_fp16__base.pt.trace.json.gz");
  EXPECT_EQ(c.job().grad_accumulation_steps.value_or(0), 4);
  EXPECT_TRUE(c.job().grad_scaler);
  EXPECT_EQ(c.job().precision, "fp16");
  EXPECT_EQ(c.leading().id, "memory.accumulation");
  EXPECT_NE(fixText(c.leading()).find("accumulation_steps = 1"), std::string::npos) << fixText(c.leading());
  EXPECT_NE(fixText(c.leading()).find("bf16"), std::string::npos) << fixText(c.leading());
  EXPECT_EQ(c.firstPlanFix(), "micro_batch");
}

// A job replaying CUDA graphs is not told to use them; a per-parameter optimizer loop is named with
// its launches and the fused fix.
TEST(WhyCases, GraphsInUseAndAnOptimizerLoop) {
  Case g = load("testdata/whatif/gpt_launch_bound__cuda_graphs.pt.trace.json.gz");
  EXPECT_TRUE(g.job().cuda_graphs);
  const std::string fixes = allFixes(g.d);
  EXPECT_EQ(fixes.find("CUDAGraph"), std::string::npos) << fixes;
  EXPECT_EQ(fixes.find("reduce-overhead"), std::string::npos) << fixes;
  Case o = load("testdata/whatif/foreach_false_optimizer__base.pt.trace.json.gz");
  EXPECT_EQ(o.job().optimizer_impl, "loop");
  const Finding* f = o.find("optimizer.unfused");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->title.find("per-parameter loop (foreach=False)"), std::string::npos) << f->title;
  EXPECT_NE(fixText(*f).find("fused=True"), std::string::npos);
  EXPECT_TRUE(f->what_if.available);
  EXPECT_GT(f->what_if.speedup, 1.5);  // measured 2.04x
  // The plan's first is CUDA graphs, which measured best (3.91x).
  EXPECT_EQ(o.firstPlanFix(), "cuda_graphs");
}

// ResNet (convolutions, TF32): bf16 alone measured 1.08x, with channels_last 1.70x; the leading
// finding is the layout. bf16 is advised for what it is, TF32 work at half the BF16 rate (not "GEMMs in
// FP32"), and predicted below the layout's gain.
TEST(WhyCases, ConvolutionsLeadWithChannelsLast) {
  Case c = load("testdata/whatif/resnet_fp32__base.pt.trace.json.gz");
  EXPECT_EQ(c.d.primary, "compute");
  EXPECT_EQ(c.leading().id, "layout.channels_last");
  EXPECT_NE(fixText(c.leading()).find("channels_last"), std::string::npos);
  const Finding* p = c.find("precision.fp32_gemm");
  ASSERT_NE(p, nullptr);
  EXPECT_NE(p->title.find("in TF32"), std::string::npos) << p->title;
  ASSERT_TRUE(p->what_if.available);
  EXPECT_GT(p->what_if.speedup, 1);  // measured 1.08x
  EXPECT_LT(p->what_if.speedup, c.leading().what_if.speedup);
}

// Traces from the wild: a CPU-only rank is left out and named; the step the last prof.step()
// opens is left out; GPU work outside hand-annotated steps is reported.
TEST(WhyCases, RobustnessOnTracesFromTheWild) {
  Case r = load("testdata/cases/cpu_rank");
  ASSERT_EQ(r.l->run.ranks.size(), 1u);
  ASSERT_EQ(r.l->run.left_out.size(), 1u);
  EXPECT_EQ(r.l->run.left_out[0].rank, 1);
  Case s = load("testdata/cases/stray_step_sched.pt.trace.json.gz");
  ASSERT_EQ(s.l->run.ranks[0].coverage.dropped.size(), 1u);
  EXPECT_EQ(s.l->run.ranks[0].coverage.dropped[0].number, 5);
  EXPECT_LT(s.d.step_ms, 50);  // the training steps' mean, not 514 ms
  Case o = load("testdata/cases/outside_steps.pt.trace.json.gz");
  EXPECT_GT(o.l->run.ranks[0].coverage.gpu_before_ns, 5'000'000);  // the 7.4 ms evaluation before step 1
  ASSERT_FALSE(o.l->run.notes.empty());
  EXPECT_NE(o.l->run.notes[0].find("outside the annotated steps"), std::string::npos) << o.l->run.notes[0];
}

// Communication written as kernels of another library (here PyTorch symmetric memory's
// one_shot_all_reduce, on the GPU machine; DeepEP's and NVSHMEM's names are in the same table and
// tested by name in ClassifyKernel): communication, not compute.
TEST(WhyCases, CommunicationKernelsThatAreNotNccl) {
  Case c = load("testdata/cases/symm_mem.pt.trace.json.gz");
  const RankAnalysis& r = c.l->run.ranks[0];
  int64_t other = 0, nccl = 0;
  for (const auto& k : c.l->run.kernels.classes) {
    if (k.cls == KernelClass::kCommOther) other = k.dur.count;
    if (k.cls == KernelClass::kNccl) nccl = k.dur.count;
  }
  EXPECT_EQ(other, 3);  // one all-reduce a step, 3 steps
  EXPECT_EQ(nccl, 0);
  // In the collectives table as an all-reduce of its library (no shapes recorded: size unknown).
  ASSERT_EQ(c.l->run.collectives.size(), 1u);
  EXPECT_EQ(c.l->run.collectives[0].collective, "allreduce");
  EXPECT_EQ(c.l->run.collectives[0].variant, "symmetric_memory");
  EXPECT_EQ(c.l->run.collectives[0].dur.count, 3);
  EXPECT_GT(r.total.comm_ns, 0);
  EXPECT_EQ(r.total.wall_ns, r.total.compute_ns + r.total.comm_exposed_ns + r.total.copy_exposed_ns + r.total.idle_ns);
}

// The healthy job: nothing predicted above 1.05x.
TEST(WhyCases, TheHealthyJobNeedsNothing) {
  Case c = load("testdata/whatif/healthy__base.pt.trace.json.gz");
  EXPECT_TRUE(c.d.plan.empty());
  for (const auto& f : c.d.findings) {
    if (f.what_if.available) {
      EXPECT_LE(f.what_if.speedup, 1.05) << f.id;
    }
  }
}

// Every committed trace: the primary bottleneck lies in the largest group (the idle causes counted
// together as host-bound), and no two findings share an id or a fix line (one cause, one finding).
TEST(WhyCases, PrimaryIsTheLargestGroupAndFindingsDoNotRepeatACause) {
  namespace fs = std::filesystem;
  std::vector<std::string> sets = {"examples/ddp_bf16_flash", "testdata/cases/cpu_rank"};
  for (const char* dir : {"testdata/whatif", "testdata/cases", "testdata/kineto"})
    for (const auto& f : fs::directory_iterator(testing::srcPath(dir)))
      if (f.path().string().find(".pt.trace.json") != std::string::npos)
        sets.push_back(std::string(dir) + "/" + f.path().filename().string());
  int checked = 0;
  for (const auto& set : sets) {
    auto l = testing::loadRun({testing::srcPath(set)});
    if (l->run.ranks.empty()) continue;
    Diagnosis d = diagnose(l->run, Thresholds::defaults());
    ASSERT_FALSE(d.groups.empty()) << set;
    for (size_t i = 1; i < d.groups.size(); ++i) EXPECT_GE(d.groups[0].share, d.groups[i].share) << set;
    EXPECT_EQ(groupOf(d.primary), d.groups.front().category) << set << ": primary " << d.primary;
    std::set<std::string> ids, lines;
    for (const auto& f : d.findings) {
      EXPECT_TRUE(ids.insert(f.id).second) << set << ": " << f.id << " twice";
      for (const auto& line : f.fix)
        if (line.size() > 12 && line[0] != ' ') {
          EXPECT_TRUE(lines.insert(line).second) << set << ": " << f.id << ": " << line;
        }
    }
    ++checked;
  }
  EXPECT_GT(checked, 45);
}

}  // namespace why_cases_test
}  // namespace gpudoctor
