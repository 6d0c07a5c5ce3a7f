#include "diagnosis/rules/rule_test_util.h"

#include "analysis/run_test_util.h"
#include "diagnosis/diagnosis.h"

namespace gpudoctor {
namespace {
using namespace testing;

TEST(RuleMemoryPlanning, NeitherInUsePasses) {
  auto r = run(memoryPlanningRule(), healthyFacts());
  EXPECT_TRUE(r.findings.empty());
  ASSERT_EQ(r.checklist.size(), 1u);
  EXPECT_EQ(r.checklist[0].area, "memory");
  EXPECT_EQ(r.checklist[0].status, CheckStatus::kPass);
}

TEST(RuleMemoryPlanning, CheckpointingWithMemoryToSpareIsNamed) {
  Facts f = healthyFacts();
  f.job.activation_checkpointing = true;
  f.job.recompute_share = 0.5;
  f.memory.push_back({0, 4'000'000'000, 150'000'000'000});
  auto r = run(memoryPlanningRule(), f);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].id, "memory.recomputation");
  EXPECT_NE(r.findings[0].title.find("recomputes 50 %"), std::string::npos) << r.findings[0].title;
  EXPECT_NEAR(r.findings[0].gain_ms_per_step, ms(f.mean.compute) * 0.5 / 1.5 + ms(f.mean.idle_host), 1e-9);
  EXPECT_EQ(r.checklist[0].status, CheckStatus::kFail);
  // Near the memory limit it is left alone.
  f.memory[0].peak_bytes = 140'000'000'000;
  EXPECT_TRUE(run(memoryPlanningRule(), f).findings.empty());
}

// On the validation traces: the checkpointed job and the accumulating one are told so; the jobs
// without either are not.
TEST(RuleMemoryPlanning, OnTheValidationTraces) {
  auto find = [](const std::string& trace, const std::string& id) {
    auto l = loadRun({srcPath("testdata/whatif/" + trace + ".pt.trace.json.gz")});
    Diagnosis d = diagnose(l->run, Thresholds::defaults());
    for (const auto& f : d.findings)
      if (f.id == id) return true;
    return false;
  };
  EXPECT_TRUE(find("activation_checkpointing__base", "memory.recomputation"));
  EXPECT_FALSE(find("activation_checkpointing__no_checkpointing", "memory.recomputation"));
  EXPECT_TRUE(find("grad_accum_fp16__base", "memory.accumulation"));
  EXPECT_FALSE(find("grad_accum_fp16__microbatch8_no_accum", "memory.accumulation"));
  EXPECT_FALSE(find("healthy__base", "memory.recomputation"));
  EXPECT_FALSE(find("healthy__base", "memory.accumulation"));
}

}  // namespace
}  // namespace gpudoctor
