// Fix `fused_optimizer`: its measured constants (used by its edit and by tests).
#pragma once
#include <cstdint>

namespace gpudoctor {

// A fused AdamW step reads 4 and writes 3 tensors per parameter in one pass; the unfused paths
// (foreach or per parameter) make about 25 such accesses (12 passes over 1-3 tensors): the
// optimizer's GPU work x 7/25.
inline constexpr double kFusedOptimizerGpuScale = 7.0 / 25.0;

}  // namespace gpudoctor
