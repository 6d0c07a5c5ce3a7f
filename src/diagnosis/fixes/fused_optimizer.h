// Fix `fused_optimizer`: its measured constants (used by its edit and by tests).
#pragma once
#include <cstdint>
#include <string_view>

namespace gpudoctor {

// The fused step's optimizer-class kernel time over the foreach step's, per optimizer class. A fused
// step reads and writes each parameter's tensors once (AdamW and Adam: 4 read, 3 written; SGD with
// momentum: 3 and 2); foreach makes several passes, more of them for the Adam family. Measured by
// scripts/probes/fused_optimizer_scale.py (H100, torch 2.11; testdata/whatif/fused_optimizer_scale_h100.jsonl):
// the median over five parameter mixes of 16 K to 32 M elements per tensor (0.36-0.41 GB a step
// per mix and more; each kernel 66-80 us in foreach); the mixes agree to 0.005.
// Cross-check: the AdamW trace pairs of testdata/whatif (H200) gave 0.29-0.35 (gpt_fp32_naive 0.292,
// gpt_wide_fp32 0.337, lstm_lm_fp32 0.339, hf_gpt2_eager_fp32 0.352).
inline constexpr double kFusedAdamWGpuScale = 0.361;
inline constexpr double kFusedAdamGpuScale = 0.404;
inline constexpr double kFusedSgdGpuScale = 0.632;
// The class the job profile names ("AdamW", "Adam", "SGD"); any other (or unknown) gets AdamW's,
// the advice's default class.
inline double fusedOptimizerGpuScale(std::string_view optimizer) {
  if (optimizer == "Adam") return kFusedAdamGpuScale;
  if (optimizer == "SGD") return kFusedSgdGpuScale;
  return kFusedAdamWGpuScale;
}

}  // namespace gpudoctor
