// Fix `fused_optimizer`: its measured constants (used by its edit and by tests).
#pragma once
#include <cstdint>
#include <string_view>

namespace gpudoctor {

// The fused step's optimizer-class kernel time over the foreach step's, per optimizer class. A fused
// step reads and writes each parameter's tensors once (AdamW and Adam: 4 read, 3 written; SGD with
// momentum: 3 and 2); foreach makes several passes, more of them for the Adam family. Measured by
// scripts/probes/fused_optimizer_scale.py (H100, torch 2.11; testdata/whatif/fused_optimizer_scale_h100.jsonl):
// the median over the mixes whose foreach kernels take 66-80 us each (1 M to 32 M elements a tensor);
// they agree to 0.005, and mixes of 25-57 us a kernel (64 K to 256 K elements a tensor, a ResNet-50-like
// mix) within 0.03 (AdamW), 0.02 (Adam) and 0.07 (SGD). Below that, where a foreach kernel takes 6-12 us,
// fusing saves less GPU time (AdamW 0.82-1.01, Adam 0.46-1.02, SGD 0.64-0.72): not modelled, the fix's
// gain there is small beside its host saving.
// Cross-check: the AdamW trace pairs of testdata/whatif (H200) gave 0.29-0.35 (gpt_fp32_naive 0.292,
// gpt_wide_fp32 0.337, lstm_lm_fp32 0.339, hf_gpt2_eager_fp32 0.352). A per-parameter loop base
// (foreach=False) gets the same scale; its elementwise kernels are not the optimizer class, so the
// scale likely overstates the fused GPU time there.
inline constexpr double kFusedAdamWGpuScale = 0.363;
inline constexpr double kFusedAdamGpuScale = 0.404;
inline constexpr double kFusedSgdGpuScale = 0.632;
// The measured class whose scale a job's optimizer gets: its own for "AdamW", "Adam" and "SGD"; any
// other (or unknown) gets AdamW's, the advice's default class.
inline std::string_view fusedScaleClass(std::string_view optimizer) {
  return optimizer == "Adam" || optimizer == "SGD" ? optimizer : "AdamW";
}
inline double fusedOptimizerGpuScale(std::string_view optimizer) {
  const std::string_view c = fusedScaleClass(optimizer);
  return c == "Adam" ? kFusedAdamGpuScale : c == "SGD" ? kFusedSgdGpuScale : kFusedAdamWGpuScale;
}

}  // namespace gpudoctor
