// Jobs judged as what they are (diagnosis/job_kind): a serving engine's decode step is inference
// (no optimizer advice) whose blocking copy is a sync, not launch overhead; a trace of a CUDA graph
// capture is not advised graphs. On a committed excerpt of a public trace
// (testdata/wild_small, testdata/wild/MANIFEST.json's entry named in each test) and on a minimal
// trace with the real names of another entry.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "analysis/run_test_util.h"
#include "diagnosis/diagnosis.h"
#include "diagnosis/facts.h"
#include "diagnosis/job_kind.h"

namespace gpudoctor {
namespace job_kind_test {
bool hasFinding(const Diagnosis& d, const std::string& prefix) {
  for (const auto& f : d.findings)
    if (f.id.rfind(prefix, 0) == 0) return true;
  return false;
}

double classShare(const KernelSummary& k, KernelClass c) {
  for (const auto& x : k.classes)
    if (x.cls == c) return x.share;
  return 0;
}

// tracelens_mi300x_sglang_qwen3_8b_decode: SGLang's Qwen3-8B decode step on an MI300X, replayed
// from a HIP graph; the host then blocks 463 ms in a 256-byte hipMemcpyWithStream (aten::copy_).
TEST(JobKind, ServingDecodeIsInferenceAndItsBlockingCopyIsASync) {
  auto l = testing::loadRun({testing::srcPath("testdata/wild_small/tracelens_mi300x_sglang_qwen3_8b_decode.json.gz")});
  const RunAnalysis& run = l->run;
  ASSERT_EQ(run.ranks.size(), 1u);
  EXPECT_EQ(run.job.mode, "inference");
  EXPECT_EQ(run.job.graph_phase, "replay");
  EXPECT_TRUE(run.job.cuda_graphs);
  // Its two aten::_foreach_copy_ kernels are copies: no optimizer kernels, no optimizer advice.
  EXPECT_EQ(classShare(run.kernels, KernelClass::kOptimizer), 0);
  const Diagnosis d = diagnose(run, Thresholds::defaults());
  EXPECT_FALSE(hasFinding(d, "optimizer.")) << d.findings.front().title;
  // The GPU idles while the host waits in the copy: sync, not launch overhead.
  const StepBreakdown& b = run.ranks.front().total;
  EXPECT_GT(b.idle_sync_ns, 400'000'000);
  EXPECT_LT(b.idle_host_ns, 10'000'000);
  EXPECT_NE(d.primary, "host_launch");
  EXPECT_FALSE(hasFinding(d, "launch.overhead"));
  EXPECT_FALSE(hasFinding(d, "memory.recomputation"));  // no backward pass: nothing recomputed
}

// A decode step launched eagerly while a HIP graph is captured, with the calls and the hipBLASLt
// kernel name of tracelens_mi300x_vllm_decode_full_capture (hipStreamBeginCapture,
// hipGraphInstantiateWithFlags): 60 short GEMMs, each behind 20 us of host work.
std::string captureTrace() {
  std::string ev = R"({"ph": "X", "cat": "cuda_runtime", "name": "hipStreamBeginCapture", "pid": 1, "tid": 1,
    "ts": 1, "dur": 2, "args": {"correlation": 1}},
    {"ph": "X", "cat": "cuda_runtime", "name": "hipGraphInstantiateWithFlags", "pid": 1, "tid": 1, "ts": 1300,
    "dur": 5, "args": {"correlation": 2}})";
  const std::string kernel =
      "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x32x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1";
  for (int k = 0; k < 60; ++k) {
    const int t = 10 + 20 * k, c = 100 + k;
    ev += ",\n" + std::string(R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": )") +
          std::to_string(t) + R"(, "dur": 18, "args": {"External id": )" + std::to_string(c) + "}}";
    ev += ",\n" +
          std::string(R"({"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel", "pid": 1, "tid": 1, "ts": )") +
          std::to_string(t + 14) + R"(, "dur": 3, "args": {"correlation": )" + std::to_string(c) + "}}";
    ev += ",\n" + std::string(R"({"ph": "X", "cat": "kernel", "name": ")") + kernel +
          R"(", "pid": 2, "tid": 3, "ts": )" + std::to_string(t + 18) + R"(, "dur": 2, "args": {"correlation": )" +
          std::to_string(c) + R"(, "External id": )" + std::to_string(c) + "}}";
  }
  return R"({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "AMD Instinct MI300X"}], "traceEvents": [)" +
         ev + "]}";
}

TEST(JobKind, GraphCaptureIsNotAdvisedGraphs) {
  const std::filesystem::path p = std::filesystem::temp_directory_path() / "gpudoctor_job_kind_capture.json";
  std::ofstream(p) << captureTrace();
  auto l = testing::loadRun({p.string()});
  std::filesystem::remove(p);
  const RunAnalysis& run = l->run;
  ASSERT_EQ(run.ranks.size(), 1u);
  EXPECT_EQ(run.job.graph_phase, "capture");
  EXPECT_EQ(run.job.mode, "inference");
  const Diagnosis d = diagnose(run, Thresholds::defaults());
  EXPECT_FALSE(hasFinding(d, "launch.overhead"));
  for (const auto& s : d.plan) EXPECT_EQ(s.fix.find("cuda_graphs"), std::string::npos) << s.fix;
  EXPECT_NE(d.findings.front().explanation.find("graph capture"), std::string::npos) << d.findings.front().explanation;
}

// The filter alone: optimizer findings go for inference; the loader's only where no DataLoader ran,
// and the DataLoader's pin_memory line becomes a pinned buffer.
TEST(JobKind, InferenceDropsOptimizerAndLoaderAdvice) {
  JobProfile job;
  job.mode = "inference";
  std::vector<Finding> fs(4);
  fs[0].id = "optimizer.unfused";
  fs[1].id = "input.loader_on_critical_path";
  fs[2].id = "input.pageable_copies";
  fs[2].fix = {"DataLoader(..., pin_memory=True)", "x = x.cuda(non_blocking=True)"};
  fs[3].id = "launch.overhead";
  fitJobKind(job, fs);
  ASSERT_EQ(fs.size(), 2u);
  EXPECT_EQ(fs[0].id, "input.pageable_copies");
  EXPECT_EQ(fs[0].fix.front().find("DataLoader"), std::string::npos);
  EXPECT_EQ(fs[1].id, "launch.overhead");
  job.mode = "training";
  std::vector<Finding> train(1);
  train[0].id = "optimizer.unfused";
  fitJobKind(job, train);
  EXPECT_EQ(train.size(), 1u);
}

}  // namespace job_kind_test
}  // namespace gpudoctor
