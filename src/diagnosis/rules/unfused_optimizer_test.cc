#include "diagnosis/rules/rule_test_util.h"

namespace gpudoctor {
namespace {
using namespace testing;

// The bound is the optimizer step's host time and its kernels' time: a fused step shrinks both. Host
// time less half the kernels' was 0 ms for the lab's kernel-bound DLRM, which fused=True made 1.38x.
TEST(RuleUnfusedOptimizer, ForeachKernelsGainAtMostTheHostStepAndTheKernels) {
  Facts f = healthyFacts();
  f.class_ns[static_cast<size_t>(KernelClass::kOptimizer)] = 20e6;  // 2 ms per step
  f.mean.optimizer = 3e6;
  auto r = run(unfusedOptimizerRule(), f);
  ASSERT_NE(r.find("optimizer.unfused"), nullptr);
  EXPECT_DOUBLE_EQ(r.findings[0].gain_ms_per_step, 5);
  f.class_ns[static_cast<size_t>(KernelClass::kOptimizer)] = 70e6;  // kernels 7 ms, host 3 ms a step
  r = run(unfusedOptimizerRule(), f);
  ASSERT_NE(r.find("optimizer.unfused"), nullptr);
  EXPECT_DOUBLE_EQ(r.findings[0].gain_ms_per_step, 10);
  EXPECT_EQ(r.checklist[0].status, CheckStatus::kFail);
  EXPECT_EQ(r.checklist[0].evidence, "optimizer kernels are foreach/per-tensor");
}

TEST(RuleUnfusedOptimizer, FusedOptimizerIsNeverAdvised) {
  Facts f = healthyFacts();
  f.class_ns[static_cast<size_t>(KernelClass::kOptimizer)] = 20e6;
  f.fused_optimizer = true;
  auto r = run(unfusedOptimizerRule(), f);
  EXPECT_TRUE(r.findings.empty());
  EXPECT_EQ(r.checklist[0].status, CheckStatus::kPass);
}

// The advice fits the optimizer's class: Adagrad (its step range "Optimizer.step#Adagrad.step", as
// the DLRM trace names it) has no fused CUDA kernel, so it is never told to become AdamW;
// a class torch.optim does not have (hta_sampled_rank0's EMAOptimizer) is advised no other class.
TEST(RuleUnfusedOptimizer, AdviceFitsTheOptimizerClass) {
  auto fixOf = [](const std::string& name, const std::string& impl) {
    Facts f = healthyFacts();
    f.class_ns[static_cast<size_t>(KernelClass::kOptimizer)] = 20e6;
    f.mean.optimizer = 3e6;
    f.job.optimizer = name;
    f.job.optimizer_impl = impl;
    auto r = run(unfusedOptimizerRule(), f);
    std::string all;
    if (const Finding* x = r.find("optimizer.unfused"))
      for (const auto& l : x->fix) all += l + "\n";
    return all;
  };
  EXPECT_NE(fixOf("AdamW", "foreach").find("torch.optim.AdamW(model.parameters(), lr=lr, fused=True)"),
            std::string::npos);
  EXPECT_NE(fixOf("SGD", "loop").find("torch.optim.SGD(model.parameters(), lr=lr, fused=True)"), std::string::npos);
  for (const char* name : {"Adagrad", "EMAOptimizer"}) {
    const std::string fix = fixOf(name, "foreach");
    EXPECT_EQ(fix.find("AdamW"), std::string::npos) << fix;
    EXPECT_EQ(fix.find("fused=True"), std::string::npos) << fix;
    EXPECT_NE(fix.find("torch.compile(opt.step)"), std::string::npos) << fix;
  }
  EXPECT_NE(fixOf("Adagrad", "loop").find("torch.optim.Adagrad(model.parameters(), lr=lr, foreach=True)"),
            std::string::npos);
}

}  // namespace
}  // namespace gpudoctor
