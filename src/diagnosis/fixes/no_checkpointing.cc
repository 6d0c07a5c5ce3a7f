// Fix `no_checkpointing`: no activation checkpointing: the recomputed forward and the wrapper's host work removed.
#include "diagnosis/fixes/no_checkpointing.h"

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "diagnosis/fixes/registry.h"

namespace gpudoctor {
namespace {

class NoCheckpointingFix : public Fix {
 public:
  std::string_view id() const override { return "no_checkpointing"; }
  std::vector<std::string_view> answers() const override { return {"memory.recomputation"}; }
  std::string_view category() const override { return ""; }
  bool edit(const FixInputs& in, ReplayEdits& ed, std::string& basis) const override {
    const RunAnalysis* run = in.run;
    bool any = !run, wrapper = false;  // without the run, the replay finds the regions itself
    if (run)
      for (const auto& r : run->ranks) {
        any |= !r.checkpoint.recompute.empty();
        wrapper |= !r.checkpoint.wrapper.empty();
      }
    if (!any) return false;
    ed.drop_recompute = true;
    basis =
        "no activation checkpointing: the forward operators that the backward passes re-run cost nothing (their "
        "host time, launches and GPU work); the backward's own work stays";
    if (wrapper) {
      ed.checkpoint_block_ns = kCheckpointWrapperBlockNs;
      basis += fmt::format(
          "; the non-reentrant wrapper's own host work ({:.2f} ms per checkpointed block, measured "
          "un-profiled on an H200 machine's host) taken from its regions: each checkpoint entry with "
          "the host time before it, and the recomputing backward nodes' time around the re-run",
          kCheckpointWrapperBlockNs / 1e6);
    }
    return true;
  }
};

}  // namespace

const Fix& noCheckpointingFix() {
  static const NoCheckpointingFix fix;
  return fix;
}

}  // namespace gpudoctor
