// Fix `moe_grouped_dispatch`: its constants (used by its edit and by tests).
#pragma once

namespace gpudoctor {

// Each expert's tokens padded to its capacity: GShard's and Switch Transformer's training capacity
// factor (validation/jobs/moe_top2_sync.py's grouped variant uses it too). The experts' work, forward
// and backward, x this.
inline constexpr double kMoeCapacityFactor = 1.25;
// The grouped dispatch's own host work per layer, in experts' blocks: the fixed-capacity dispatch of
// validation/jobs/moe_top2_sync.py runs 25 operators per layer (one-hot, cumsum, gather, where,
// index_copy, two batched GEMMs, ...) where the per-expert loop runs 12 per expert.
inline constexpr double kMoeGroupedBlocks = 2.0;

}  // namespace gpudoctor
