// The GPU idles while the host fetches the next batch; or the loader is hidden now, and this says
// when it stops being hidden.
#include <algorithm>

#include <fmt/format.h>

#include "diagnosis/rules/fixes.h"
#include "diagnosis/rules/registry.h"

namespace gpudoctor {
namespace {

class Loader : public Rule {
 public:
  std::string_view id() const override { return "input.loader"; }
  std::vector<const ThresholdDecl*> thresholds() const override { return {&guide::kIoWaitMax}; }
  void evaluate(const Facts& f, const Thresholds& th, std::vector<Finding>& out) const override {
    bool single = f.loader_in_process;
    const auto& m = f.mean;
    double loader_share = f.share(m.idle_loader);
    if (loader_share > th.get(guide::kIoWaitMax) || (single && m.idle_loader > 0)) {
      Finding x = gainFinding(f, th, "input.loader_on_critical_path",
                              fmt::format("The GPU idles {:.1f}% of the step while the host fetches data{}",
                                          pct(loader_share), single ? " in the training process (num_workers=0)" : ""),
                              m.idle_loader, "GPU idle time while inside DataLoader __next__ (upper bound)");
      x.evidence = {{"DataLoader next()", ms(m.loader), "ms/step"},
                    {"GPU idle meanwhile", ms(m.idle_loader), "ms/step"},
                    {"IO wait share", pct(loader_share), "%"}};
      x.explanation = single ? "Samples are loaded in the training process, so the GPU waits for each batch."
                             : "The loader does not keep up: batches are not ready when the GPU needs them.";
      x.fix = fixes::input();
      out.push_back(std::move(x));
    } else if (single && m.loader > 0 && m.busy > 0) {
      // Loading in the training process, hidden now: say when it stops being hidden. (With worker
      // processes the trace shows only the main process's wait, not the workers' production rate.)
      double speedup = m.busy / std::max(1.0, m.loader);
      Finding x = gainFinding(
          f, th, "input.loader_hidden",
          fmt::format("The DataLoader ({:.2f} ms/step on the host) is hidden behind GPU work", ms(m.loader)), 0,
          "no gain now");
      x.severity = Severity::kOk;
      x.evidence = {{"DataLoader next()", ms(m.loader), "ms/step"}, {"GPU busy", ms(m.busy), "ms/step"}};
      x.explanation = fmt::format(
          "It becomes the bottleneck once GPU work per step falls below {:.2f} ms ({:.1f}x faster than now).",
          ms(m.loader), speedup);
      out.push_back(std::move(x));
    }
  }
  void checklist(const Facts& f, const Thresholds& th, const std::vector<Finding>& mine,
                 std::vector<ChecklistItem>& out) const override {
    std::vector<Finding> critical;
    for (const auto& x : mine)
      if (x.id == "input.loader_on_critical_path") critical.push_back(x);
    out.push_back({"io",
                   fmt::format("IO wait < {:.0f}% (loader off the critical path)", pct(th.get(guide::kIoWaitMax))),
                   statusFrom(critical, f.mean.loader > 0),
                   fmt::format("GPU idle while loading {:.1f}% of the step", pct(f.share(f.mean.idle_loader)))});
  }
};

}  // namespace

const Rule& loaderRule() {
  static const Loader r;
  return r;
}

}  // namespace gpudoctor
