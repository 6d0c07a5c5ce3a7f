// Fix `moe_grouped_dispatch`: a fixed-capacity MoE dispatch with the experts' GEMMs batched, in place
// of the per-expert loops (analysis/moe_dispatch.h).
#include "diagnosis/fixes/moe_grouped_dispatch.h"

#include <string>

#include <fmt/format.h>

#include "diagnosis/fixes/registry.h"

namespace gpudoctor {
namespace {

class MoeGroupedDispatchFix : public Fix {
 public:
  std::string_view id() const override { return "moe_grouped_dispatch"; }
  std::vector<std::string_view> answers() const override { return {"moe.per_expert_dispatch"}; }
  std::string_view category() const override { return "sync"; }
  bool edit(const FixInputs& in, ReplayEdits& ed, std::string& basis) const override {
    bool found = false;
    if (in.run)
      for (const RankAnalysis& r : in.run->ranks) found |= r.moe.found();
    if (!found) return false;
    ed.moe_blocks_kept = kMoeGroupedBlocks;
    ed.moe_gpu_scale = kMoeCapacityFactor;
    basis = fmt::format(
        "the per-expert loops' syncs stop waiting for the GPU; their host time and launches, forward and "
        "backward, shrink to {:.0f} experts' worth per layer (the grouped dispatch's own operators); the GPU work "
        "launched in them x {:.2f} (each expert padded to a capacity factor of {:.2f})",
        kMoeGroupedBlocks, kMoeCapacityFactor, kMoeCapacityFactor);
    return true;
  }
};

}  // namespace

const Fix& moeGroupedDispatchFix() {
  static const MoeGroupedDispatchFix fix;
  return fix;
}

}  // namespace gpudoctor
