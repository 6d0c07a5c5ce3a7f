// Diagnosis on real traces of three contrasting scenarios (scripts/testdata/make_traces.py on 2 x H200):
// the top finding must be the right one and each missing optimization must be named, with the
// numbers it rests on. Plus the thresholds file's error messages.
#include "diagnosis/diagnosis.h"

#include <gtest/gtest.h>

#include "sources/nccl_env/settings_reader.h"
#include "sources/trace_set.h"

namespace gpudoctor {
namespace diagnosis_test {
std::string src(const std::string& rel) { return std::string(GPUDOCTOR_SOURCE_DIR) + "/" + rel; }

struct Case {
  std::vector<RankTrace> traces;
  RunAnalysis run;
  Diagnosis d;
};

std::unique_ptr<Case> diagnoseFiles(const std::vector<std::string>& rel) {
  std::vector<std::string> paths;
  for (const auto& r : rel) paths.push_back(src(r));
  auto c = std::make_unique<Case>();
  auto files = expandTracePaths(paths);
  auto t = readTraceSet(files.value());
  EXPECT_TRUE(t.ok());
  c->traces = std::move(t.value());
  auto r = analyzeRun(c->traces, {});
  EXPECT_TRUE(r.ok());
  c->run = std::move(r.value());
  c->d = diagnose(c->run, Thresholds::defaults());
  return c;
}

const Finding* find(const Diagnosis& d, const std::string& id) {
  for (const auto& f : d.findings)
    if (f.id == id) return &f;
  return nullptr;
}

double evidence(const Finding& f, const std::string& name) {
  for (const auto& e : f.evidence)
    if (e.name == name) return e.value;
  ADD_FAILURE() << f.id << " has no evidence " << name;
  return -1;
}

void expectActionable(const Diagnosis& d) {
  for (const auto& f : d.findings) {
    EXPECT_FALSE(f.title.empty());
    if (f.severity == Severity::kCritical || f.severity == Severity::kWarning) {
      EXPECT_FALSE(f.fix.empty()) << f.id << " has no fix";
      EXPECT_FALSE(f.evidence.empty()) << f.id << " shows no numbers";
    }
    EXPECT_GE(f.gain_share, 0);
    EXPECT_LE(f.gain_share, 1.0001) << f.id;
  }
}

CheckStatus check(const Diagnosis& d, const std::string& item_prefix) {
  for (const auto& c : d.checklist)
    if (c.item.rfind(item_prefix, 0) == 0) return c.status;
  ADD_FAILURE() << "no checklist item " << item_prefix;
  return CheckStatus::kUnknown;
}

TEST(Diagnosis, HealthyBf16FlashIsHostBoundWithAStraggler) {
  auto c = diagnoseFiles({"examples/ddp_bf16_flash"});
  const auto& d = c->d;
  expectActionable(d);
  // A small model under the profiler: the GPU mostly waits for launches.
  EXPECT_EQ(d.primary, "host_launch");
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings[0].id, "bottleneck.host_launch");
  const Finding* launch = find(d, "launch.overhead");
  ASSERT_NE(launch, nullptr);
  EXPECT_LT(evidence(*launch, "median kernel"), 10);
  const Finding* s = find(d, "communication.straggler");
  ASSERT_NE(s, nullptr);
  EXPECT_NE(s->title.find("Rank 0"), std::string::npos);
  EXPECT_GT(evidence(*s, "others wait"), 10);  // ms/step rank 1 waits inside NCCL
  // What this run already does right is not flagged.
  EXPECT_EQ(find(d, "precision.fp32_gemm"), nullptr);
  EXPECT_EQ(find(d, "attention.materialized"), nullptr);
  EXPECT_EQ(find(d, "optimizer.unfused"), nullptr);
  EXPECT_EQ(find(d, "input.pageable_copies"), nullptr);
  EXPECT_EQ(find(d, "input.loader_on_critical_path"), nullptr);
  EXPECT_EQ(check(d, "Mixed precision"), CheckStatus::kPass);
  EXPECT_EQ(check(d, "Fused (flash) attention"), CheckStatus::kPass);
  EXPECT_EQ(check(d, "Pinned host memory"), CheckStatus::kPass);
  EXPECT_EQ(check(d, "DataLoader workers"), CheckStatus::kPass);
  EXPECT_EQ(check(d, "GPU memory"), CheckStatus::kUnknown);
}

TEST(Diagnosis, Fp32NaiveNamesEveryMissingOptimization) {
  auto c = diagnoseFiles(
      {"testdata/kineto/fp32_naive_rank0.pt.trace.json.gz", "testdata/kineto/fp32_naive_rank1.pt.trace.json.gz"});
  const auto& d = c->d;
  expectActionable(d);
  // The single-process loader (2 ms per sample) is the top cost.
  EXPECT_EQ(d.primary, "input");
  EXPECT_EQ(d.findings[0].id, "bottleneck.input");
  const Finding* loader = find(d, "input.loader_on_critical_path");
  ASSERT_NE(loader, nullptr);
  EXPECT_GT(evidence(*loader, "IO wait share"), 30);
  EXPECT_NE(loader->fix[0].find("num_workers"), std::string::npos);
  const Finding* fp32 = find(d, "precision.fp32_gemm");
  ASSERT_NE(fp32, nullptr);
  EXPECT_GT(evidence(*fp32, "FP32 share of GEMM"), 99);
  EXPECT_NE(fp32->fix[0].find("torch.autocast"), std::string::npos);
  const Finding* attn = find(d, "attention.materialized");
  ASSERT_NE(attn, nullptr);
  EXPECT_NE(attn->fix[0].find("scaled_dot_product_attention"), std::string::npos);
  const Finding* opt = find(d, "optimizer.unfused");
  ASSERT_NE(opt, nullptr);
  EXPECT_NE(opt->fix[0].find("fused=True"), std::string::npos);
  const Finding* pageable = find(d, "input.pageable_copies");
  ASSERT_NE(pageable, nullptr);
  EXPECT_NE(pageable->fix[0].find("pin_memory=True"), std::string::npos);
  EXPECT_EQ(find(d, "precision.fp16_gradscaler"), nullptr);  // no fp16: no GradScaler advice
  EXPECT_EQ(check(d, "DataLoader workers"), CheckStatus::kFail);
  EXPECT_EQ(check(d, "Fused (flash) attention"), CheckStatus::kFail);
  EXPECT_EQ(check(d, "Fused optimizer"), CheckStatus::kFail);
  // Findings after the first: those with a replayed prediction by predicted speedup, then the
  // rest by estimated gain.
  for (size_t i = 2; i < d.findings.size(); ++i) {
    const Finding &a = d.findings[i - 1], &b = d.findings[i];
    if (b.what_if.available) {
      EXPECT_TRUE(a.what_if.available) << b.id;
      EXPECT_GE(a.what_if.speedup, b.what_if.speedup) << a.id << " " << b.id;
    } else if (!a.what_if.available) {
      EXPECT_GE(a.gain_ms_per_step, b.gain_ms_per_step) << a.id << " " << b.id;
    }
  }
}

TEST(Diagnosis, TinyModelIsLaunchBound) {
  auto c = diagnoseFiles(
      {"testdata/kineto/launch_bound_rank0.pt.trace.json.gz", "testdata/kineto/launch_bound_rank1.pt.trace.json.gz"});
  const auto& d = c->d;
  expectActionable(d);
  EXPECT_EQ(d.primary, "host_launch");
  EXPECT_EQ(d.findings[0].id, "bottleneck.host_launch");
  const Finding* launch = find(d, "launch.overhead");
  ASSERT_NE(launch, nullptr);
  EXPECT_GT(evidence(*launch, "kernels"), 300);
  EXPECT_LT(evidence(*launch, "median kernel"), 3);
  // The whole step captured first (what the prediction is for), then torch.compile's reduce-overhead.
  EXPECT_NE(launch->fix[1].find("torch.cuda.graph"), std::string::npos);
  EXPECT_NE(launch->fix[2].find("torch.compile"), std::string::npos);
  EXPECT_NE(find(d, "communication.exposed"), nullptr);
  EXPECT_EQ(check(d, "Kernel fusion"), CheckStatus::kFail);
}

TEST(Diagnosis, NcclSettingsJoinTheFindingsAndChecklist) {
  auto c = diagnoseFiles({"examples/ddp_bf16_flash"});
  EXPECT_EQ(check(c->d, "NCCL settings"), CheckStatus::kUnknown);
  auto s = readNcclSettings("NCCL_ALGO=Ring\nNCCL_AVOID_NODE0=1\nNCCL_NVLS_ENABLE=0\n", "job.sh");
  ASSERT_TRUE(s.ok());
  EnvCheckOptions o;
  o.version = 22803;
  auto env = checkNcclEnv(s.value(), NcclVarTable::builtin(), o);
  DiagnosisInputs in;
  in.nccl_env = &env;
  auto d = diagnose(c->run, Thresholds::defaults(), in);
  const Finding* f = find(d, "nccl.settings");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(evidence(*f, "ignored"), 1);
  EXPECT_DOUBLE_EQ(evidence(*f, "slow"), 1);
  EXPECT_EQ(f->fix.size(), 2u);
  EXPECT_EQ(check(d, "NCCL settings"), CheckStatus::kFail);
}

TEST(Thresholds, OverridesAndErrorsNameTheKey) {
  Thresholds t = Thresholds::defaults();
  EXPECT_DOUBLE_EQ(t.find("gpu_util_min").value(), 0.90);
  ASSERT_TRUE(t.loadTomlText("gpu_util_min = 0.8\ncomm_share_max = 0.3\n", "t.toml").ok());
  EXPECT_DOUBLE_EQ(t.find("gpu_util_min").value(), 0.8);
  ASSERT_TRUE(t.loadTomlText("[thresholds]\nshort_kernel_us = 20\n", "t.toml").ok());
  EXPECT_DOUBLE_EQ(t.find("short_kernel_us").value(), 20);
  auto err = [&](const char* text) { return t.loadTomlText(text, "t.toml").message(); };
  EXPECT_NE(err("gpu_util = 0.9").find("unknown threshold \"gpu_util\""), std::string::npos);
  // A typo names the key meant (issue 42: the whole list, no "did you mean").
  EXPECT_NE(err("gpu_utl_min = 0.9").find("did you mean \"gpu_util_min\"?"), std::string::npos)
      << err("gpu_utl_min = 0.9");
  EXPECT_NE(err("gpu_util_min = \"high\"").find("\"gpu_util_min\" must be a number"), std::string::npos);
  EXPECT_NE(err("gpu_util_min = true").find("\"gpu_util_min\" must be a number"), std::string::npos);
  EXPECT_NE(err("gpu_util_min = 1.5").find("\"gpu_util_min\" = 1.5 is out of range"), std::string::npos);
  EXPECT_NE(err("gpu_util_min = ").find("t.toml:1"), std::string::npos);
  EXPECT_NE(err("\n\nio_wait_max = -1").find("t.toml:3"), std::string::npos);
}

TEST(Thresholds, StricterThresholdChangesTheVerdict) {
  auto c = diagnoseFiles({"examples/ddp_bf16_flash"});
  Thresholds t = Thresholds::defaults();
  ASSERT_TRUE(t.loadTomlText("comm_share_max = 0.9", "t.toml").ok());
  auto d = diagnose(c->run, t);
  EXPECT_NE(find(c->d, "communication.exposed"), nullptr);
  EXPECT_EQ(find(d, "communication.exposed"), nullptr);
}

}  // namespace diagnosis_test
}  // namespace gpudoctor
