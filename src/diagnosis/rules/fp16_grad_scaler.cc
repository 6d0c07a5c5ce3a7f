// FP16 GEMMs need loss scaling (bf16 needs none): numerical safety, no time gain.
#include <fmt/format.h>

#include "diagnosis/rules/registry.h"

namespace gpudoctor {
namespace {

constexpr ThresholdDecl kFp16GemmShareMin{
    "fp16_gemm_share_min", 0.05, 0, 1, "ratio", "share of GEMM time in FP16 from which loss scaling is advised"};

class Fp16GradScaler : public Rule {
 public:
  std::string_view id() const override { return "precision.fp16_gradscaler"; }
  std::vector<const ThresholdDecl*> thresholds() const override { return {&kFp16GemmShareMin}; }
  void evaluate(const Facts& f, const Thresholds& th, std::vector<Finding>& out) const override {
    double gemm = f.gemmNs(), fp16 = f.classNs(KernelClass::kGemmFp16);
    if (gemm <= 0 || fp16 / gemm <= th.get(kFp16GemmShareMin)) return;
    Finding x = gainFinding(f, th, "precision.fp16_gradscaler",
                            "FP16 GEMMs: loss scaling is required (or use bf16, which needs none)", 0,
                            "no time gain; numerical safety");
    x.severity = Severity::kInfo;
    x.evidence = {{"FP16 share of GEMM", pct(fp16 / gemm), "%"}};
    x.explanation =
        "FP16 has a narrow exponent range; gradients underflow without a loss scale. BF16 has FP32's range.";
    x.fix = {
        "scaler = torch.amp.GradScaler(\"cuda\", init_scale=2.**16, growth_factor=2.0, backoff_factor=0.5, "
        "growth_interval=2000)",
        "scaler.scale(loss).backward(); scaler.step(opt); scaler.update()",
        "# or: torch.autocast(\"cuda\", dtype=torch.bfloat16) and drop the scaler"};
    out.push_back(std::move(x));
  }
};

}  // namespace

const Rule& fp16GradScalerRule() {
  static const Fp16GradScaler r;
  return r;
}

}  // namespace gpudoctor
