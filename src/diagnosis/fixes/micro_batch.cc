// Fix `micro_batch`: gradient accumulation's micro-batches merged into one of A times the size.
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "diagnosis/fixes/registry.h"

namespace gpudoctor {
namespace {

// A kernel's fixed cost (launch, ramp-up, tail) that does not grow with its work: the shortest
// kernels on an H200 run about this long (the same floor as kBf16GemmFloorNs).
inline constexpr int64_t kKernelFixedNs = 3000;

class MicroBatchFix : public Fix {
 public:
  std::string_view id() const override { return "micro_batch"; }
  std::vector<std::string_view> answers() const override { return {"memory.accumulation"}; }
  std::string_view category() const override { return ""; }
  bool edit(const FixInputs& in, ReplayEdits& ed, std::string& basis) const override {
    const RunAnalysis* run = in.run;
    // Needs the accumulation factor: from the job profile (all ranks alike), or the caller's edit.
    int a = ed.micro_batch_merge;
    if (run && run->job.grad_accumulation_steps) a = *run->job.grad_accumulation_steps;
    if (a < 2) return false;
    ed.micro_batch_merge = a;
    ed.merge_kernel_fixed_ns = kKernelFixedNs;
    basis = fmt::format(
        "one micro-batch of {0}x the size in place of {0} accumulated ones: the forward and backward "
        "passes' host time and launches x 1/{0}, each kernel outside the optimizer once at {0}x the "
        "work (t = {1:.0f} us + w becomes {1:.0f} us + {0} w); the optimizer step, the loader and the "
        "copies' bytes unchanged (memory permitting)",
        a, kKernelFixedNs / 1e3);
    return true;
  }
};

}  // namespace

const Fix& microBatchFix() {
  static const MicroBatchFix fix;
  return fix;
}

}  // namespace gpudoctor
