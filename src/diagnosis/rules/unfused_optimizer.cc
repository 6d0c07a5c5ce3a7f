// The optimizer runs foreach / per-parameter kernels where a fused implementation is one launch per
// parameter group.
#include <algorithm>

#include "diagnosis/rules/registry.h"

namespace gpudoctor {
namespace {

class UnfusedOptimizer : public Rule {
 public:
  std::string_view id() const override { return "optimizer.unfused"; }
  void evaluate(const Facts& f, const Thresholds& th, std::vector<Finding>& out) const override {
    double opt_kernels = f.classNs(KernelClass::kOptimizer);
    // A per-parameter loop (foreach=False) launches elementwise kernels, not optimizer ones: the
    // optimizer step's host range tells it too.
    if (f.fused_optimizer || (opt_kernels <= 0 && f.mean.optimizer <= 0)) return;
    // Host time of the optimizer step bounds what a single fused kernel can save.
    double gain = f.mean.optimizer > 0 ? std::max(0.0, f.mean.optimizer - f.perStep(opt_kernels) / 2)
                                       : f.perStep(opt_kernels) / 2;
    Finding x = gainFinding(f, th, "optimizer.unfused", "The optimizer runs unfused (foreach / per-parameter kernels)",
                            gain,
                            "optimizer step host time minus half its kernel time: a fused optimizer is one launch per "
                            "parameter group");
    x.evidence = {{"optimizer step (host)", ms(f.mean.optimizer), "ms/step"},
                  {"optimizer kernels", ms(f.perStep(opt_kernels)), "ms/step"}};
    x.explanation = "Fused AdamW/Adam/SGD update all parameters in a few kernels instead of several per tensor.";
    x.fix = {"opt = torch.optim.AdamW(model.parameters(), lr=lr, fused=True)"};
    out.push_back(std::move(x));
  }
  void checklist(const Facts& f, const Thresholds&, const std::vector<Finding>& mine,
                 std::vector<ChecklistItem>& out) const override {
    out.push_back({"compute", "Fused optimizer", statusFrom(mine, f.classNs(KernelClass::kOptimizer) > 0),
                   f.fused_optimizer ? "fused optimizer kernels seen" : "optimizer kernels are foreach/per-tensor"});
  }
};

}  // namespace

const Rule& unfusedOptimizerRule() {
  static const UnfusedOptimizer r;
  return r;
}

}  // namespace gpudoctor
