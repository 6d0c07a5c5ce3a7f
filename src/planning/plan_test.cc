// The planner's arithmetic against published figures: ZeRO's 7.5 B / 64 GPU example, 16-18 bytes
// per parameter for mixed-precision AdamW, Korthikanti et al.'s activation formulas, the PaLM
// appendix's FLOPs per token, and parameter counts of released models.
#include "planning/plan.h"
#include "planning/trace_fit.h"

#include <gtest/gtest.h>

namespace gpudoctor {
namespace {

TEST(Plan, ZeroPaperExample) {
  // ZeRO (Rajbhandari et al. 2020), Figure 1: 7.5 B parameters, 64-way data parallel, K = 12.
  TrainSpec t;
  const double psi = 7.5e9;
  EXPECT_NEAR(modelStatesPerGpu(psi, t, 0, 64).total() / 1e9, 120, 0.05);
  EXPECT_NEAR(modelStatesPerGpu(psi, t, 1, 64).total() / 1e9, 31.4, 0.05);
  EXPECT_NEAR(modelStatesPerGpu(psi, t, 2, 64).total() / 1e9, 16.6, 0.05);
  EXPECT_NEAR(modelStatesPerGpu(psi, t, 3, 64).total() / 1e9, 1.9, 0.05);
}

TEST(Plan, BytesPerParameter) {
  TrainSpec t;
  EXPECT_DOUBLE_EQ(modelStatesPerGpu(1, t, 0, 1).total(), 16);  // 2 + 2 + 12
  t.fp32_grad_accumulation = true;
  EXPECT_DOUBLE_EQ(modelStatesPerGpu(1, t, 0, 1).total(), 18);  // 2 + 4 + 12
  t = TrainSpec{};
  t.precision = Precision::kAmp;  // PyTorch autocast: 4 + 4 + 8, the same total
  EXPECT_DOUBLE_EQ(modelStatesPerGpu(1, t, 0, 1).total(), 16);
  EXPECT_DOUBLE_EQ(modelStatesPerGpu(1, t, 1, 4).optimizer, 2);  // ZeRO-1 shards m and v only
  t = TrainSpec{};
  t.precision = Precision::kFp32;
  EXPECT_DOUBLE_EQ(modelStatesPerGpu(1, t, 0, 1).total(), 16);  // 4 + 4 + 8
  t.optimizer = "sgd";
  EXPECT_DOUBLE_EQ(modelStatesPerGpu(1, t, 0, 1).total(), 12);
}

TEST(Plan, KorthikantiActivationFormulas) {
  // GPT-3 175B shapes (s = 2048, h = 12288, a = 96), b = 1, t = 8: the paper's Table 2 formulas.
  ModelSpec m = modelPreset("gpt3-175b").value();
  TrainSpec t;
  t.flash_attention = false;
  ParallelConfig c;
  c.micro_batch = 1;
  double sbh = 2048.0 * 12288, as_h = 5.0 * 96 * 2048 / 12288;  // 5as/h = 80
  c.tp = 1;
  t.sequence_parallel = false;
  EXPECT_DOUBLE_EQ(activationBytesPerLayer(m, t, c), sbh * (34 + as_h));
  c.tp = 8;
  EXPECT_DOUBLE_EQ(activationBytesPerLayer(m, t, c), sbh * (10 + 24.0 / 8 + as_h / 8));
  t.sequence_parallel = true;
  EXPECT_DOUBLE_EQ(activationBytesPerLayer(m, t, c), sbh * (34.0 / 8 + as_h / 8));
  c.recompute = Recompute::kSelective;
  EXPECT_DOUBLE_EQ(activationBytesPerLayer(m, t, c), sbh * 34.0 / 8);
  c.recompute = Recompute::kFull;
  EXPECT_DOUBLE_EQ(activationBytesPerLayer(m, t, c), 2 * sbh / 8);
  // Flash attention never stores the scores: the same as selective recomputation.
  t.flash_attention = true;
  c.recompute = Recompute::kNone;
  EXPECT_DOUBLE_EQ(activationBytesPerLayer(m, t, c), sbh * 34.0 / 8);
  // The paper's headline: 175B with t = 8, SP and selective recomputation needs 34/8 = 4.25
  // bytes·sbh per layer instead of 114 (a 5x saving even before the 8-way split).
  EXPECT_NEAR((34.0 + as_h) / (34.0 / 8), 26.8, 0.1);
}

TEST(Plan, FlopsPerTokenAndParameterCounts) {
  // Parameter counts of the released checkpoints.
  EXPECT_EQ(totalParams(modelPreset("gpt2").value()), 124439808);
  EXPECT_EQ(totalParams(modelPreset("gpt2-xl").value()), 1557611200);
  EXPECT_EQ(totalParams(modelPreset("llama2-7b").value()), 6738415616);
  EXPECT_EQ(totalParams(modelPreset("llama2-70b").value()), 68976648192);
  EXPECT_EQ(totalParams(modelPreset("llama3-8b").value()), 8030261248);
  // PaLM appendix B: training FLOPs per token = 6N + 12·L·H·Q·T. For GPT-3 175B:
  // 6 x 174.6e9 + 12 x 96 x 12288 x 2048 = 1.077e12 (N without the position table).
  ModelSpec g = modelPreset("gpt3-175b").value();
  double n = static_cast<double>(totalParams(g) - 2048 * 12288);
  EXPECT_NEAR(trainFlopsPerToken(g), 6 * n + 12.0 * 96 * 12288 * 2048, 1e6);
  EXPECT_NEAR(trainFlopsPerToken(g) / 1e12, 1.0765, 0.001);
}

TEST(Plan, SearchFindsFeasibleAndRanks) {
  ModelSpec m = modelPreset("llama2-7b").value();
  ClusterSpec k = gpuPreset("h100").value();
  TrainSpec t;
  t.global_batch = 256;
  auto plans = searchPlans(m, k, t, {});
  ASSERT_FALSE(plans.empty());
  ASSERT_TRUE(plans.front().fits);
  for (size_t i = 1; i < plans.size() && plans[i].fits; ++i) EXPECT_LE(plans[i - 1].time.step_s, plans[i].time.step_s);
  for (const auto& p : plans) {
    EXPECT_TRUE(validateConfig(m, k, t, p.cfg).ok());
    if (p.fits) {
      EXPECT_LE(p.mem.total(), 0.95 * k.memory_bytes);
    }
    EXPECT_GT(p.time.mfu, 0);
    EXPECT_LT(p.time.mfu, k.efficiency + 1e-9);  // never above the assumed efficiency
  }
  // 7B with AdamW needs 16 x 6.74e9 = 108 GB of states: on 80 GB GPUs without sharding it cannot fit.
  for (const auto& p : plans)
    if (p.cfg.tp == 1 && p.cfg.pp == 1 && p.cfg.zero == 0) {
      EXPECT_FALSE(p.fits);
    }
}

TEST(Plan, ImpossibleInputsSayWhy) {
  ModelSpec m = modelPreset("llama2-7b").value();
  ClusterSpec k = gpuPreset("h100").value();
  TrainSpec t;
  t.global_batch = 64;
  EXPECT_NE(validateConfig(m, k, t, {3, 1, 8, 0, Recompute::kNone, 1, 8}).message().find("tp x pp x dp"),
            std::string::npos);
  k.nodes = 3;
  auto e = validateConfig(m, k, t, {3, 1, 8, 0, Recompute::kNone, 1, 8});
  EXPECT_NE(e.message().find("does not divide the 32 attention heads"), std::string::npos) << e.message();
  EXPECT_FALSE(modelPreset("llama9-1t").ok());
  EXPECT_NE(modelPreset("llama9-1t").error().message.find("llama2-7b"), std::string::npos);
  EXPECT_FALSE(gpuPreset("v100x").ok());
}

// The traced job's configuration: what the trace shows pins the search, flags win over it, and what
// neither tells is left to the search and marked as assumed.
TEST(TraceFit, TracePinsFlagsWinRestAssumed) {
  TracedJob fsdp;
  fsdp.world = 8;
  fsdp.data_parallel = "fsdp";
  fsdp.accumulation = 2;
  fsdp.checkpointing = true;
  fsdp.autocast = true;
  fsdp.precision = "bf16";
  GivenSettings none;
  TraceFit f = fitTrace(fsdp, none, 64, 8);
  EXPECT_EQ(f.pins.zero, 3);
  EXPECT_EQ(f.pins.tp, 1);
  EXPECT_EQ(f.pins.recompute, static_cast<int>(Recompute::kFull));
  EXPECT_EQ(f.pins.micro_batch, 4);  // 64 / dp 8 / accumulation 2
  ASSERT_TRUE(f.precision.has_value());
  EXPECT_EQ(*f.precision, Precision::kAmp);
  EXPECT_EQ(f.gpus.value_or(0), 8);
  GivenSettings flags;
  flags.pins.zero = 2;
  flags.precision = true;
  TraceFit g = fitTrace(fsdp, flags, 64, 8);
  EXPECT_EQ(g.pins.zero, 2);
  EXPECT_EQ(g.zero_from, "--zero");
  EXPECT_FALSE(g.precision.has_value());
  // A trace that tells nothing: every degree is the search's, and said so.
  TraceFit u = fitTrace(TracedJob{}, none, 64, 8);
  EXPECT_EQ(u.pins.zero, -1);
  EXPECT_EQ(u.pins.micro_batch, -1);
  EXPECT_EQ(u.zero_from.rfind("assumed", 0), 0u) << u.zero_from;
  // A micro-batch the planner cannot model (not a power of two) is a note, not a wrong pin.
  TracedJob ddp;
  ddp.world = 2;
  ddp.data_parallel = "ddp";
  ddp.accumulation = 1;
  TraceFit odd = fitTrace(ddp, none, 24, 2);
  EXPECT_EQ(odd.pins.micro_batch, -1);
  ASSERT_EQ(odd.notes.size(), 1u);
  EXPECT_NE(odd.notes[0].find("micro-batch would be 12"), std::string::npos) << odd.notes[0];
}

}  // namespace
}  // namespace gpudoctor
