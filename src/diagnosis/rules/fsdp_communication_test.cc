#include "diagnosis/rules/rule_test_util.h"

namespace gpudoctor {
namespace {
using namespace testing;

// An FSDP job on 4 GPUs whose all-gathers and reduce-scatters are 30 % exposed: 10 steps of 10 ms,
// 2 ms all-gather and 1 ms reduce-scatter kernels a step per rank; 100 M bf16 parameters gathered
// twice a step (forward and backward).
Facts fsdpFacts() {
  Facts f = healthyFacts();
  f.ranks = 4;
  f.steps = 40;
  f.mean.compute = 6.5e6;
  f.mean.comm = 3.5e6;
  f.mean.comm_exposed = 3e6;
  f.mean.busy = 9.5e6;
  f.job.data_parallel = "fsdp";
  f.device_bytes = 150'000'000'000;
  // Per call: the gathered (output) bytes; 40 rank-steps x 2 gathers of 200 MB each.
  f.collectives.push_back({200'000'000, 80, "_allgather_base", 40 * 2e6, "BFloat16"});
  f.collectives.push_back({200'000'000, 40, "reduce_scatter_tensor", 40 * 1e6, "BFloat16"});
  return f;
}

TEST(RuleFsdpCommunication, ExposedGathersGetFsdpKnobsAndTheModelSize) {
  auto r = run(fsdpCommunicationRule(), fsdpFacts());
  ASSERT_EQ(r.findings.size(), 1u);
  const Finding& x = r.findings[0];
  EXPECT_EQ(x.id, "communication.fsdp");
  EXPECT_NE(x.title.find("FSDP: exposed communication 30.0% of the step (all-gather 2.00, reduce-scatter 1.00"),
            std::string::npos)
      << x.title;
  EXPECT_DOUBLE_EQ(evidenceOf(x, "parameters (from the all-gathers)"), 100.0);  // 200 MB / 2 B per bf16
  // 16 B per parameter, in GiB as every report's memory (issue 42: GB here, GiB elsewhere).
  EXPECT_DOUBLE_EQ(evidenceOf(x, "replicated state under DDP"), 1.6e9 / (1024.0 * 1024 * 1024));
  std::string fix;
  for (const auto& l : x.fix) fix += l + "\n";
  EXPECT_NE(fix.find("forward_prefetch=True"), std::string::npos);
  EXPECT_NE(fix.find("limit_all_gathers=True"), std::string::npos);
  EXPECT_NE(fix.find("reshard_after_forward=False"), std::string::npos);
  // 1.5 GiB of 140 GiB: DDP fits, and is said.
  EXPECT_NE(fix.find("model = DDP("), std::string::npos) << fix;
  EXPECT_NE(x.explanation.find("about 100 M parameters"), std::string::npos) << x.explanation;
  EXPECT_NE(x.explanation.find("1.5 GiB of weights"), std::string::npos) << x.explanation;
  EXPECT_EQ(x.explanation.find(" GB"), std::string::npos) << x.explanation;
}

TEST(RuleFsdpCommunication, ALargeModelIsNotToldDdpAndHiddenCommunicationPasses) {
  Facts f = fsdpFacts();
  f.collectives[0].bytes = 10'000'000'000;  // 5 B parameters: 80 GB replicated
  auto r = run(fsdpCommunicationRule(), f);
  ASSERT_EQ(r.findings.size(), 1u);
  for (const auto& l : r.findings[0].fix) EXPECT_EQ(l.find("DDP("), std::string::npos) << l;
  // Hidden under compute (exposed below comm_share_max): nothing to say.
  f.mean.comm_exposed = 0.5e6;
  EXPECT_TRUE(run(fsdpCommunicationRule(), f).findings.empty());
  // Not FSDP: the DDP rule's, not this one's.
  f = fsdpFacts();
  f.job.data_parallel = "ddp";
  EXPECT_TRUE(run(fsdpCommunicationRule(), f).findings.empty());
  // And an FSDP job's exposed communication is not also the DDP rule's (one cause, one finding).
  EXPECT_TRUE(run(exposedCommunicationRule(), fsdpFacts()).findings.empty());
}

}  // namespace
}  // namespace gpudoctor
