// Fix `fused_optimizer`: a fused optimizer step (AdamW(fused=True)).
#include "diagnosis/fixes/fused_optimizer.h"

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "diagnosis/fixes/registry.h"

namespace gpudoctor {
namespace {

class FusedOptimizerFix : public Fix {
 public:
  std::string_view id() const override { return "fused_optimizer"; }
  std::vector<std::string_view> answers() const override { return {"optimizer.unfused"}; }
  std::string_view category() const override { return "host_launch"; }
  bool edit(const FixInputs& in, ReplayEdits& ed, std::string& basis) const override {
    std::string_view name = "AdamW";
    if (in.run && !in.run->job.optimizer.empty()) name = in.run->job.optimizer;
    const std::string_view measured = fusedScaleClass(name);
    ed.fused_optimizer = true;
    ed.optimizer_gpu_scale = fusedOptimizerGpuScale(name);
    ed.optimizer_kernel_add_ns = 0;  // fused, the step is capturable without the loop's or foreach's extra kernels
    basis = fmt::format(
        "each optimizer step's operators and launches replaced by two operators at its median "
        "operator cost (the parameter gathering before them kept); its GPU work x {:.2f} ({}'s fused kernels "
        "make one pass over each parameter's tensors; their time over the foreach ones', measured{})",
        ed.optimizer_gpu_scale, measured, name == measured ? "" : fmt::format("; {} assumed alike", name));
    return true;
  }
};

}  // namespace

const Fix& fusedOptimizerFix() {
  static const FusedOptimizerFix fix;
  return fix;
}

}  // namespace gpudoctor
