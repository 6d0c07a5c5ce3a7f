// GEMMs on CUDA cores in FP32: mixed precision (bf16 autocast, or TF32; fp16 autocast with a GradScaler
// before Ampere) moves them to tensor cores. GEMMs and convolutions in TF32 (cuDNN's default for
// convolutions) are on tensor cores already, at half the BF16 rate: bf16 autocast doubles that rate and
// halves the bytes around them.
#include <string>

#include <fmt/format.h>

#include "diagnosis/fixes/bf16.h"
#include "diagnosis/rules/registry.h"
#include "diagnosis/what_if.h"

namespace gpudoctor {
namespace {

constexpr ThresholdDecl kFp32GemmShareMax{"fp32_gemm_share_max",
                                          0.10,
                                          0,
                                          1,
                                          "ratio",
                                          "share of GEMM time in FP32 (non-tensor-core) kernels, or else in TF32"};
// Hopper and Ampere datasheets: TF32 tensor cores run ~7-8x the FP32 SIMT rate, BF16 ~15x.
constexpr ThresholdDecl kTf32Speedup{
    "tf32_speedup", 7, 1, 100, "x", "TF32 tensor-core rate over FP32 SIMT on Ampere and newer (datasheets: 7-8x)"};
constexpr ThresholdDecl kTf32SpeedupOld{
    "tf32_speedup_unknown_gpu", 2, 1, 100, "x", "the same for a GPU of unknown generation (a cautious factor)"};
// Before Ampere (Volta, Turing) there are no TF32 or BF16 tensor cores: the fix is fp16 autocast with
// a GradScaler, at the FP16 tensor-core rate. Datasheets: V100 SXM2 125 / 15.7, T4 65 / 8.1 TFLOP/s
// (FP16 tensor / FP32); GeForce Turing accumulates FP32 at half that rate (RTX 2080 Ti 26.9 / 13.4).
constexpr double kFp16SpeedupPreAmpere = 8;

class Fp32Gemm : public Rule {
 public:
  std::string_view id() const override { return "precision.fp32_gemm"; }
  std::vector<const ThresholdDecl*> thresholds() const override {
    return {&kFp32GemmShareMax, &kTf32Speedup, &kTf32SpeedupOld};
  }
  void evaluate(const Facts& f, const Thresholds& th, std::vector<Finding>& out) const override {
    double fp32 = f.classNs(KernelClass::kGemmFp32Simt), tf32 = f.classNs(KernelClass::kGemmTf32), gemm = f.gemmNs();
    if (gemm <= 0) return;
    double fp32_share = fp32 / gemm;
    // compute_major < 0: unknown, advised as Ampere or newer (bf16 / TF32) with the cautious factor.
    const bool pre_ampere = f.compute_major >= 0 && f.compute_major < 8;
    // FP32 under the threshold but TF32 over it (no TF32 before Ampere): the same bf16 advice, its title
    // saying what runs now.
    const bool tf32_led = fp32_share <= th.get(kFp32GemmShareMax);
    if (tf32_led && (pre_ampere || tf32 / gemm <= th.get(kFp32GemmShareMax))) return;
    std::string rate = pre_ampere
                           ? fmt::format(
                                 "fp16 autocast can take at most, as this GPU generation has no BF16 or TF32 tensor "
                                 "cores; upper bound; FP16 tensor cores run GEMMs up to about {:.0f}x the FP32 rate "
                                 "on V100 and T4 (datasheets)",
                                 kFp16SpeedupPreAmpere)
                       : tf32_led ? std::string(
                                        "bf16 autocast can take at most; upper bound; BF16 tensor cores run "
                                        "GEMMs at twice the TF32 rate")
                                  : fmt::format(
                                        "bf16 autocast can take at most; upper bound; TF32 alone runs GEMMs about "
                                        "{:.0f}x the FP32 rate on this GPU generation",
                                        f.compute_major >= 8 ? th.get(kTf32Speedup) : th.get(kTf32SpeedupOld));
    if (!f.compute_major_note.empty()) rate += "; " + f.compute_major_note;
    Finding x = gainFinding(
        f, th, "precision.fp32_gemm",
        tf32_led ? fmt::format("{:.0f}% of GEMM time runs in TF32, at half the BF16 tensor-core rate", pct(tf32 / gemm))
                 : fmt::format("{:.0f}% of GEMM time runs in FP32 without tensor cores", pct(fp32_share)),
        f.perStep(fp32 + f.classNs(KernelClass::kGemmTf32) + f.classNs(KernelClass::kAttentionFused) +
                  f.classNs(KernelClass::kElementwise) * (1 - kBf16ElementwiseScaleMin) +
                  (f.layout_transpose_ns + f.tensor_transform_ns) * (1 - kBf16LayoutTransposeScale)),
        fmt::format("all of the FP32 and TF32 GEMM and fused-attention time, and {:.0f} % of the elementwise "
                    "kernels' and {:.0f} % of the convolutions' layout transposes and transforms' (what {})",
                    100 * (1 - kBf16ElementwiseScaleMin), 100 * (1 - kBf16LayoutTransposeScale), rate));
    x.evidence = {{"FP32 GEMM", ms(f.perStep(fp32)), "ms/step"},
                  {"GEMM total", ms(f.perStep(gemm)), "ms/step"},
                  {"FP32 share of GEMM", pct(fp32_share), "%"},
                  {"TF32 share", pct(tf32 / gemm), "%"},
                  {"BF16 share", pct(f.classNs(KernelClass::kGemmBf16) / gemm), "%"},
                  {"FP16 share", pct(f.classNs(KernelClass::kGemmFp16) / gemm), "%"}};
    x.explanation = tf32_led
                        ? "Matrix multiplies and convolutions run on tensor cores in TF32, at half the rate of BF16; "
                          "bf16 autocast doubles that rate and halves the bytes of the work around them."
                        : "Matrix multiplies run on CUDA cores in FP32. Mixed precision moves them to tensor cores.";
    if (!pre_ampere) {
      x.fix = {"with torch.autocast(\"cuda\", dtype=torch.bfloat16):   # around the forward pass and loss",
               "    loss = model(x)"};
      if (!tf32_led)
        x.fix.push_back("# or, keeping FP32 weights and activations: torch.backends.cuda.matmul.allow_tf32 = True");
    } else  // no bf16 or TF32 tensor cores before Ampere: fp16 with loss scaling
      x.fix = {"scaler = torch.amp.GradScaler(\"cuda\")",
               "with torch.autocast(\"cuda\", dtype=torch.float16): loss = model(x)",
               "scaler.scale(loss).backward(); scaler.step(opt); scaler.update()"};
    out.push_back(std::move(x));
  }
  void checklist(const Facts& f, const Thresholds&, const std::vector<Finding>& mine,
                 std::vector<ChecklistItem>& out) const override {
    double gemm = f.gemmNs();
    out.push_back({"compute", "Mixed precision for matrix multiplies", statusFrom(mine, gemm > 0),
                   gemm > 0 ? fmt::format("FP32 SIMT share of GEMM time {:.0f}%, TF32 {:.0f}%",
                                          pct(f.classNs(KernelClass::kGemmFp32Simt) / gemm),
                                          pct(f.classNs(KernelClass::kGemmTf32) / gemm))
                            : "no GEMM kernels in the trace"});
  }
};

}  // namespace

const Rule& fp32GemmRule() {
  static const Fp32Gemm r;
  return r;
}

}  // namespace gpudoctor
