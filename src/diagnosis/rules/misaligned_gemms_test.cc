#include "analysis/run_test_util.h"
#include "diagnosis/diagnosis.h"
#include "diagnosis/fixes/pad_gemm_dims.h"
#include "diagnosis/rules/rule_test_util.h"

namespace gpudoctor {
namespace {
using namespace testing;

TEST(RuleMisalignedGemms, ItsBoundIsWhatTheAlignedKernelsWouldNotTake) {
  Facts f = healthyFacts();  // 10 steps of 10 ms
  EXPECT_TRUE(run(misalignedGemmsRule(), f).findings.empty());
  f.misaligned_gemm_ns = {10 * 2e6, 10 * 1e6, 0};  // 2 ms a step at 2-byte, 1 ms at 4-byte alignment
  f.misaligned_gemms = 30;
  auto r = run(misalignedGemmsRule(), f);
  ASSERT_EQ(r.findings.size(), 1u);
  const Finding& x = r.findings[0];
  EXPECT_EQ(x.id, "gemm.misaligned");
  EXPECT_NEAR(x.gain_ms_per_step, 2 * (1 - kPaddedGemmShare[0]) + 1 * (1 - kPaddedGemmShare[1]), 1e-9);
  EXPECT_EQ(x.severity, Severity::kCritical);
  EXPECT_NE(x.fix[0].find("pad_to_multiple_of=64"), std::string::npos);
  // A saving under the smallest share worth a finding: none.
  f.misaligned_gemm_ns = {10 * 0.05e6, 0, 0};
  EXPECT_TRUE(run(misalignedGemmsRule(), f).findings.empty());
}

// The lab's GPT-2 small (6 layers) under bf16 autocast on an H200 (testdata/lab/README.md): its LM head
// over a vocabulary of 50257 runs three cutlass_75 align1 kernels a step, 7.9 ms of a 29 ms traced step;
// OPT's vocabulary (50272, a multiple of 8) runs aligned and is not named.
TEST(RuleMisalignedGemms, OnTheLabsBf16Traces) {
  auto gpt2 = loadRun({srcPath("testdata/lab/gpt2_small_fp32__bf16.pt.trace.json.gz")});
  const Diagnosis d = diagnose(gpt2->run, Thresholds::defaults());
  const Finding* x = nullptr;
  for (const Finding& f : d.findings)
    if (f.id == "gemm.misaligned") x = &f;
  ASSERT_NE(x, nullptr);
  ASSERT_GE(x->evidence.size(), 3u);
  EXPECT_NEAR(x->evidence[0].value, 7.92, 0.05) << "ms/step";
  EXPECT_NEAR(x->evidence[2].value, 3, 1e-9) << "kernels per step";
  ASSERT_TRUE(x->what_if.available);
  // Padding takes GPU time only: the step after it is never below the GPU's busy time it reports,
  // which loses what the fix takes from those kernels (traced 21.76 ms busy).
  EXPECT_GT(x->what_if.speedup, 1.0);
  EXPECT_NEAR(x->what_if.gpu_busy_ns / 1e6, 21.76 - 7.92 * (1 - kPaddedGemmShare[0]), 0.3);
  EXPECT_GE(x->what_if.step_ns + 1, x->what_if.gpu_busy_ns);

  auto opt = loadRun({srcPath("testdata/lab/opt_eager_attention_bf16__base.pt.trace.json.gz")});
  for (const Finding& f : diagnose(opt->run, Thresholds::defaults()).findings) EXPECT_NE(f.id, "gemm.misaligned");
}

}  // namespace
}  // namespace gpudoctor
