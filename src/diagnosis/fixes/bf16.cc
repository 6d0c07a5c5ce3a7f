// Fix `bf16`: bf16 autocast: FP32/TF32 GEMMs and FP32 fused attention at the BF16 rate of the ceilings, casts added.
#include "diagnosis/fixes/bf16.h"

#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analysis/gpu_generation.h"
#include "analysis/precision_kinds.h"
#include "diagnosis/fixes/registry.h"

namespace gpudoctor {
namespace {

// "N casts a step, " where autocast would cast in the run's traced steps (mean over ranks), or "".
std::string castsPerStep(const RunAnalysis* run) {
  if (!run) return "";
  double casts = 0;
  size_t windows = 0;
  for (const RankAnalysis& r : run->ranks) {
    for (const CastSite& c : r.autocast_casts) casts += c.casts;
    windows += r.windows.size();
  }
  return windows ? fmt::format("{:.0f} casts a step in this trace, ", casts / static_cast<double>(windows)) : "";
}

// The share of GEMM-class kernel time spent in convolutions (by name), over the run's ranks; 0 without a run.
double convolutionShare(const RunAnalysis* run) {
  if (!run) return 0;
  double conv = 0, gemm = 0;
  for (const RankAnalysis& r : run->ranks) {
    if (!r.trace) continue;
    std::vector<int8_t> is_conv(r.trace->strings.size(), -1);
    for (size_t i = 0; i < r.trace->events.size(); ++i) {
      const Event& e = r.trace->events[i];
      if (e.kind != EventKind::kKernel || i >= r.index.class_of_event.size() || !isGemm(r.index.class_of_event[i]))
        continue;
      int8_t& c = is_conv[e.name];
      if (c < 0) c = isConvolutionKernelName(r.trace->strings.view(e.name)) ? 1 : 0;
      gemm += static_cast<double>(e.dur_ns);
      if (c) conv += static_cast<double>(e.dur_ns);
    }
  }
  return gemm > 0 ? conv / gemm : 0;
}

class Bf16Fix : public Fix {
 public:
  std::string_view id() const override { return "bf16"; }
  std::vector<std::string_view> answers() const override { return {"precision.fp32_gemm"}; }
  std::string_view category() const override { return "compute"; }
  bool edit(const FixInputs& in, ReplayEdits& ed, std::string& basis) const override {
    const Ceilings* c = in.ceilings;
    const RunAnalysis* run = in.run;
    if (!c || c->peak(GemmPrecision::kFp32) <= 0 || c->peak(GemmPrecision::kBf16) <= 0) return false;
    // No BF16 tensor cores before Ampere (V100, T4): the finding advises fp16 with a GradScaler there,
    // whatever ceilings were given. The generation is the trace's, else its kernel names'.
    if (run && !run->ranks.empty() && run->ranks.front().trace) {
      const int major = gpuGenerationOf(*run->ranks.front().trace).compute_major;
      if (major >= 0 && major < 8) return false;
    }
    const double bf16 = c->peak(GemmPrecision::kBf16) * kBf16GemmEfficiency;
    for (auto [k, p] : {std::pair{KernelClass::kGemmFp32Simt, GemmPrecision::kFp32},
                        std::pair{KernelClass::kGemmTf32, GemmPrecision::kTf32}}) {
      if (c->peak(p) <= 0) continue;
      const size_t i = static_cast<size_t>(k);
      ed.kernel_scale[i] = c->peak(p) / bf16 + kAutocastCastShare;
      ed.kernel_floor_ns[i] = kBf16GemmFloorNs;
      ed.kernel_add_ns[i] = kAutocastCastNs;
    }
    ed.attention_gemm_scale = 0.5;  // a head's K of 64-128: memory bound, half the bytes
    ed.attention_scores_scale = kAutocastAttentionScoresScale;
    // FP32 fused attention (SIMT) becomes a BF16 tensor-core one (flash / cuDNN).
    ed.fused_attention_fp32_scale =
        c->peak(GemmPrecision::kFp32) / (c->peak(GemmPrecision::kBf16) * kBf16AttentionEfficiency);
    ed.kernel_floor_ns[static_cast<size_t>(KernelClass::kAttentionFused)] = kBf16GemmFloorNs;
    ed.autocast_cast_ns = kAutocastCastHostNs;
    const double conv = convolutionShare(run);
    const double elementwise = kBf16ElementwiseScale - (kBf16ElementwiseScale - kBf16ConvNetElementwiseScale) * conv;
    ed.kernel_scale[static_cast<size_t>(KernelClass::kElementwise)] = elementwise;
    ed.convolution_scale = kBf16ConvolutionScale;
    ed.batch_norm_scale *= kAutocastBatchNormScale;
    ed.layout_transpose_scale *= kBf16LayoutTransposeScale;
    ed.recurrent_gemm_scale = kAutocastRecurrentGemmScale;
    ed.recurrent_other_scale = kAutocastRecurrentOtherScale;
    basis = fmt::format(
        "autocast: FP32/TF32 GEMM kernels at {:.0f} % of the BF16 rate of {} ({:.0f} TFLOP/s; at least {:.0f} us "
        "each) plus casts of {:.0f} us + {:.0f} % of its FP32 time per GEMM, and {:.1f} us of host time per cast "
        "({}before each lower-precision forward operator, at each explicit cast of its output and in backward); FP32 "
        "fused attention x {:.3f} (a BF16 "
        "fused kernel at {:.0f} % of that rate); elementwise kernels x {:.2f} in a transformer, a materialized "
        "attention's batched "
        "GEMMs x 0.5 (memory bound) and its score matrix's other kernels x {:.2f} (casts around its FP32 "
        "softmax); softmax, normalization, reductions and the optimizer stay FP32 (autocast's FP32 "
        "list, FP32 master weights); convolutions x {:.2f} and elementwise kernels x {:.2f} here ({:.0f} % of the GEMM "
        "time is in convolutions), batch norms x {:.2f} (bf16 inputs, FP32 statistics and casts), the convolutions' "
        "layout transposes and transforms x {:.2f} (half the bytes); a cuDNN RNN's GEMMs "
        "x {:.2f} and its "
        "cell kernels x {:.2f} (it runs in FP16)",
        100 * kBf16GemmEfficiency, c->device, c->peak(GemmPrecision::kBf16), kBf16GemmFloorNs / 1e3,
        kAutocastCastNs / 1e3, 100 * kAutocastCastShare, kAutocastCastHostNs / 1e3, castsPerStep(run),
        ed.fused_attention_fp32_scale, 100 * kBf16AttentionEfficiency, kBf16ElementwiseScale,
        kAutocastAttentionScoresScale, kBf16ConvolutionScale, elementwise, 100 * conv, kAutocastBatchNormScale,
        kBf16LayoutTransposeScale, kAutocastRecurrentGemmScale, kAutocastRecurrentOtherScale);
    return true;
  }
};

}  // namespace

const Fix& bf16Fix() {
  static const Bf16Fix fix;
  return fix;
}

}  // namespace gpudoctor
