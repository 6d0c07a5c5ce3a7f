// The guide's first check: the GPU busy more than gpu_util_min of the step (checklist only; the
// causes of idle time are the other rules' findings).
#include <fmt/format.h>

#include "diagnosis/rules/registry.h"

namespace gpudoctor {
namespace {

class GpuUtilization : public Rule {
 public:
  std::string_view id() const override { return "compute.gpu_utilization"; }
  std::vector<const ThresholdDecl*> thresholds() const override { return {&guide::kGpuUtilMin}; }
  void evaluate(const Facts&, const Thresholds&, std::vector<Finding>&) const override {}
  void checklist(const Facts& f, const Thresholds& th, const std::vector<Finding>&,
                 std::vector<ChecklistItem>& out) const override {
    double min = th.get(guide::kGpuUtilMin), busy = f.share(f.mean.busy);
    out.push_back({"compute", fmt::format("GPU utilization > {:.0f}%", pct(min)),
                   busy >= min ? CheckStatus::kPass : CheckStatus::kFail,
                   fmt::format("GPU busy {:.1f}% of the step", pct(busy))});
  }
};

}  // namespace

const Rule& gpuUtilizationRule() {
  static const GpuUtilization r;
  return r;
}

}  // namespace gpudoctor
