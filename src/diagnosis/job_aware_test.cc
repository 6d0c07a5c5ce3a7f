// Advice that knows the job: no finding advises a feature the job profile says is in use, on every
// committed trace, judged by patterns written here independently of job_aware.cc's.
#include "diagnosis/job_aware.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "analysis/run_test_util.h"
#include "diagnosis/diagnosis.h"

namespace gpudoctor {
namespace {

TEST(JobAware, AFeatureInUseIsNotAdvisedAndTheAdviceFitsTheJob) {
  JobProfile job;
  job.cuda_graphs = true;
  job.loader_multiprocess = true;
  Finding f;
  f.id = "launch.overhead";
  f.fix = {"model = torch.compile(model, mode=\"reduce-overhead\")   # kernel fusion + CUDA graphs",
           "# or capture the step yourself: g = torch.cuda.CUDAGraph(); with torch.cuda.graph(g): ...",
           "DataLoader(ds, batch_size=B, num_workers=8, pin_memory=True,",
           "           persistent_workers=True, prefetch_factor=4)",
           "# and/or raise the micro-batch size so each kernel does more work"};
  std::vector<Finding> v = {f};
  respectJobProfile(job, v);
  ASSERT_EQ(v.size(), 1u);
  for (const auto& line : v[0].fix) {
    EXPECT_EQ(line.find("reduce-overhead"), std::string::npos) << line;
    EXPECT_EQ(line.find("CUDAGraph"), std::string::npos) << line;
    EXPECT_EQ(line.find("num_workers=8"), std::string::npos) << line;
    EXPECT_EQ(line.find("persistent_workers"), std::string::npos) << line;  // the dropped line's continuation
  }
  EXPECT_EQ(v[0].fix.front(), "# and/or raise the micro-batch size so each kernel does more work");
  EXPECT_NE(v[0].explanation.find("Already in use (job profile): CUDA graphs, DataLoader workers"), std::string::npos)
      << v[0].explanation;
  std::string all;
  for (const auto& line : v[0].fix) all += line + "\n";
  EXPECT_NE(all.find("capture what still launches eagerly"), std::string::npos) << all;
  // A job using none of them keeps the advice as it was.
  std::vector<Finding> w = {f};
  respectJobProfile(JobProfile{}, w);
  EXPECT_EQ(w[0].fix, f.fix);
}

// Boolean-mask indexing syncs the step on a data-dependent shape: CUDA graphs cannot capture it, so
// the advice says what must go first, and the replay predicts no graphed step for it (the held-out
// mask_small job: its launch-bound finding keeps its bound).
TEST(JobAware, DataDependentShapesKeepCudaGraphsOut) {
  JobProfile job;
  EXPECT_FALSE(hasDataDependentShapes(job));
  job.host_syncs.push_back({"aten::item", "cudaStreamSynchronize", "", "DtoH", 1, 1000, 500});
  EXPECT_FALSE(hasDataDependentShapes(job));
  job.host_syncs.push_back({"aten::nonzero", "cudaStreamSynchronize", "aten::index", "DtoH", 2, 1000, 500});
  EXPECT_TRUE(hasDataDependentShapes(job));
  Finding f;
  f.id = "launch.overhead";
  f.fix = {"# or capture the step yourself: g = torch.cuda.CUDAGraph(); with torch.cuda.graph(g): ..."};
  std::vector<Finding> v = {f};
  respectJobProfile(job, v);
  ASSERT_EQ(v[0].fix.size(), 1u);
  EXPECT_NE(v[0].fix[0].find("torch.where"), std::string::npos) << v[0].fix[0];
  auto l = testing::loadRun({testing::srcPath("testdata/whatif/mask_small__base.pt.trace.json.gz")});
  ASSERT_TRUE(hasDataDependentShapes(l->run.job));
  Diagnosis d = diagnose(l->run, Thresholds::defaults());
  ASSERT_TRUE(d.what_if.available) << d.what_if.basis;
  bool launch = false;
  for (const auto& x : d.findings)
    if (x.id == "launch.overhead") {
      launch = true;
      EXPECT_FALSE(x.what_if.available);
    }
  EXPECT_TRUE(launch);
  for (const auto& p : d.plan) EXPECT_NE(p.fix, "cuda_graphs");
}

TEST(JobAware, FsdpJobsGetFsdpAdviceNotDdp) {
  JobProfile job;
  job.data_parallel = "fsdp";
  Finding f;
  f.id = "communication.exposed";
  f.fix = {"model = DDP(model, bucket_cap_mb=25, gradient_as_bucket_view=True)",
           "with model.no_sync(): loss.backward()   # on all but the last micro-batch"};
  std::vector<Finding> v = {f};
  respectJobProfile(job, v);
  std::string all;
  for (const auto& line : v[0].fix) all += line + "\n";
  EXPECT_EQ(all.find("DDP("), std::string::npos) << all;
  EXPECT_EQ(all.find("no_sync"), std::string::npos) << all;
  EXPECT_NE(all.find("forward_prefetch=True"), std::string::npos) << all;
}

// Every committed trace: what the profile says is in use is never in a fix line.
TEST(JobAware, NoCommittedTraceIsAdvisedAFeatureItUses) {
  namespace fs = std::filesystem;
  std::vector<std::vector<std::string>> sets = {
      {"examples/ddp_bf16_flash"},
      {"testdata/kineto/fp32_naive_rank0.pt.trace.json.gz", "testdata/kineto/fp32_naive_rank1.pt.trace.json.gz"},
      {"testdata/kineto/launch_bound_rank0.pt.trace.json.gz", "testdata/kineto/launch_bound_rank1.pt.trace.json.gz"}};
  for (const char* dir : {"testdata/whatif", "testdata/cases"})
    for (const auto& f : fs::directory_iterator(testing::srcPath(dir)))
      if (f.path().string().find(".pt.trace.json.gz") != std::string::npos)
        sets.push_back({std::string(dir) + "/" + f.path().filename().string()});
  sets.push_back({"testdata/cases/cpu_rank"});
  int checked = 0, in_use = 0;
  for (const auto& set : sets) {
    std::vector<std::string> paths;
    for (const auto& p : set) paths.push_back(testing::srcPath(p));
    auto l = testing::loadRun(paths);
    Diagnosis d = diagnose(l->run, Thresholds::defaults());
    const JobProfile& job = l->run.job;
    struct Rule {
      bool used;
      std::regex advice;
    };
    const std::vector<Rule> rules = {
        {job.cuda_graphs, std::regex("CUDAGraph|cuda\\.graph\\(|reduce-overhead")},
        {job.torch_compile, std::regex("torch\\.compile\\(")},
        {job.optimizer_impl == "fused", std::regex("fused=True")},
        {job.loader_multiprocess.value_or(false), std::regex("num_workers=[1-9]")},
        {job.pin_memory.value_or(false), std::regex("pin_memory=True")},
        {job.autocast.value_or(false), std::regex("torch\\.autocast\\(")},
        {job.data_parallel == "fsdp" || job.data_parallel == "zero", std::regex("DDP\\(|no_sync")},
        {job.data_parallel == "fsdp", std::regex("CUDAGraph|cuda\\.graph\\(|reduce-overhead")}};
    for (const auto& r : rules) in_use += r.used;
    for (const auto& f : d.findings)
      for (const auto& line : f.fix) {
        ++checked;
        for (const auto& r : rules)
          EXPECT_FALSE(r.used && std::regex_search(line, r.advice)) << set[0] << " " << f.id << ": " << line;
      }
  }
  EXPECT_GT(checked, 100);
  EXPECT_GT(in_use, 20);  // the set has jobs with graphs, fused optimizers, workers, pinned memory, autocast
}

}  // namespace
}  // namespace gpudoctor
