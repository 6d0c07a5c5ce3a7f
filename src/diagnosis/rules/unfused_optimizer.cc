// The optimizer runs foreach / per-parameter kernels where a fused implementation is one launch per
// parameter group.
#include <algorithm>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "diagnosis/rules/registry.h"

namespace gpudoctor {
namespace {

// The implementation each optimizer class has on CUDA: torch.optim's fused kernels exist for Adam,
// AdamW and SGD; Adagrad's fused=True runs on the CPU only, and RMSprop, Adadelta, Adamax, NAdam,
// RAdam, ASGD and Rprop have foreach only. Past foreach, torch.compile fuses the step. A class
// torch.optim does not have is advised no other class.
std::vector<std::string> fixFor(const std::string& name, const std::string& impl) {
  if (name.empty() || name == "AdamW" || name == "Adam" || name == "SGD")
    return {fmt::format("opt = torch.optim.{}(model.parameters(), lr=lr, fused=True)", name.empty() ? "AdamW" : name)};
  static constexpr std::string_view kForeachOnly[] = {"Adagrad", "RMSprop", "Adadelta", "Adamax",
                                                      "NAdam",   "RAdam",   "ASGD",     "Rprop"};
  const bool foreach_only = std::find(std::begin(kForeachOnly), std::end(kForeachOnly), name) != std::end(kForeachOnly);
  const std::string compiled = "opt.step = torch.compile(opt.step)   # fuses the update into a few kernels";
  if (foreach_only && impl == "loop")
    return {fmt::format("opt = torch.optim.{}(model.parameters(), lr=lr, foreach=True)   # {} has no fused CUDA "
                        "implementation",
                        name, name),
            "# or: " + compiled};
  if (foreach_only) return {fmt::format("# {} has no fused CUDA implementation; past foreach:", name), compiled};
  return {fmt::format("# use {}'s fused or multi-tensor (foreach) implementation if it has one, or:", name), compiled};
}

class UnfusedOptimizer : public Rule {
 public:
  std::string_view id() const override { return "optimizer.unfused"; }
  void evaluate(const Facts& f, const Thresholds& th, std::vector<Finding>& out) const override {
    double opt_kernels = f.classNs(KernelClass::kOptimizer);
    // A per-parameter loop (foreach=False) launches elementwise kernels, not optimizer ones: the
    // optimizer step's host range tells it too.
    if (f.fused_optimizer || (opt_kernels <= 0 && f.mean.optimizer <= 0)) return;
    // What a fused step can take at most: the optimizer step's host time and its kernels' GPU time. Both
    // shrink (a few launches; one pass over each parameter's tensors where foreach makes several), so host
    // time less the kernels' is no bound: it is 0 for the lab's DLRM, bound by its foreach Adam's kernels,
    // which fused=True made 1.38x faster.
    const double gain = std::max(0.0, f.mean.optimizer) + f.perStep(opt_kernels);
    // The implementation from the job profile: a per-parameter loop, or foreach's multi-tensor ops.
    const JobProfile& job = f.job;
    const std::string name = job.optimizer.empty() ? "AdamW" : job.optimizer;
    std::string title = "The optimizer runs unfused (foreach / per-parameter kernels)";
    if (job.optimizer_impl == "loop")
      title = fmt::format("{} runs a per-parameter loop (foreach=False): {:.0f} kernel launches per step", name,
                          job.optimizer_launches_per_step);
    else if (job.optimizer_impl == "foreach")
      title = fmt::format("{} runs foreach (multi-tensor) kernels, not the fused one: {:.0f} launches per step", name,
                          job.optimizer_launches_per_step);
    Finding x = gainFinding(f, th, "optimizer.unfused", title, gain,
                            "the optimizer step's host time and its kernels' GPU time (a fused optimizer is a few "
                            "launches per parameter group and one pass over each parameter's tensors)");
    x.evidence = {{"optimizer step (host)", ms(f.mean.optimizer), "ms/step"},
                  {"optimizer kernels", ms(f.perStep(opt_kernels)), "ms/step"}};
    if (job.optimizer_launches_per_step > 0)
      x.evidence.push_back({"optimizer launches", job.optimizer_launches_per_step, "per step"});
    x.explanation =
        "Fused AdamW/Adam/SGD update all parameters in a few kernels instead of several per tensor"
        " (loop -> foreach -> fused: each step fewer launches); other optimizers go as far as foreach, and a"
        " compiled step fuses further.";
    x.fix = fixFor(job.optimizer, job.optimizer_impl);
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
