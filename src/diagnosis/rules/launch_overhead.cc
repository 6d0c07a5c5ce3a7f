// Launch-bound: kernels shorter than their launch cost, and the GPU waiting for the host to launch.
#include <fmt/format.h>

#include "diagnosis/rules/registry.h"

namespace gpudoctor {
namespace {

constexpr ThresholdDecl kHostIdleMax{
    "host_idle_max", 0.10, 0, 1, "ratio", "share of the step the GPU idles waiting for the host to launch work"};
constexpr ThresholdDecl kShortKernelUs{
    "short_kernel_us", 10, 0, 1e6, "us", "median kernel duration below which launch overhead dominates"};

class LaunchOverhead : public Rule {
 public:
  std::string_view id() const override { return "launch.overhead"; }
  std::vector<const ThresholdDecl*> thresholds() const override { return {&kHostIdleMax, &kShortKernelUs}; }
  void evaluate(const Facts& f, const Thresholds& th, std::vector<Finding>& out) const override {
    if (f.compute_kernels == 0) return;
    double kernels_per_step = f.compute_kernels / f.steps;
    double median_us = static_cast<double>(f.compute_kernel_p50_ns) / 1e3;
    double launch_idle = f.mean.idle_host - f.mean.idle_host_loader;  // not the time spent waiting for data
    double host = f.share(launch_idle);
    if (median_us >= th.get(kShortKernelUs) || host <= th.get(kHostIdleMax)) return;
    Finding x = gainFinding(f, th, "launch.overhead",
                            fmt::format("Launch-bound: {:.0f} kernels per step with a median of {:.1f} us; the GPU "
                                        "waits for launches {:.0f}% of the step",
                                        kernels_per_step, median_us, pct(host)),
                            launch_idle, "GPU idle time waiting for the host to launch (upper bound)");
    x.evidence = {{"kernels", kernels_per_step, "per step"},
                  {"median kernel", median_us, "us"},
                  {"idle: host launch", ms(launch_idle), "ms/step"}};
    x.explanation =
        "Each kernel costs a few microseconds of host time to launch; when kernels are shorter than "
        "that, the GPU starves. Fusing kernels or replaying CUDA graphs removes the launches.";
    // In the order of what they buy: the whole step captured (what the replay's prediction is for),
    // then the model alone graphed by torch.compile, the optimizer and loss eager (its own prediction
    // is in the basis; measured 2.9x where the whole step would replay at 6.3x).
    x.fix = {"# whole step in one CUDAGraph, optimizer too (capturable=True); then g.replay() per step",
             "g = torch.cuda.CUDAGraph(); with torch.cuda.graph(g): step(static_x, static_y)",
             "# or: model = torch.compile(model, mode=\"reduce-overhead\")   # fusion + CUDA graphs, but",
             "#   reduce-overhead graphs the model alone: the optimizer step and the loss stay eager",
             "# and/or raise the micro-batch size so each kernel does more work"};
    out.push_back(std::move(x));
  }
  void checklist(const Facts& f, const Thresholds&, const std::vector<Finding>& mine,
                 std::vector<ChecklistItem>& out) const override {
    out.push_back({"compute", "Kernel fusion / launch overhead under control", statusFrom(mine, f.compute_kernels > 0),
                   fmt::format("median kernel {:.1f} us, GPU waiting on launches {:.1f}% of the step",
                               static_cast<double>(f.compute_kernel_p50_ns) / 1e3, pct(f.share(f.mean.idle_host)))});
  }
};

}  // namespace

const Rule& launchOverheadRule() {
  static const LaunchOverhead r;
  return r;
}

}  // namespace gpudoctor
