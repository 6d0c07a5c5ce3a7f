// A rank's allocated memory peaks above the guide's limit (profile_memory=True traces).
#include <fmt/format.h>

#include "diagnosis/rules/registry.h"

namespace gpudoctor {
namespace {

class MemoryPeak : public Rule {
 public:
  std::string_view id() const override { return "memory.peak"; }
  std::vector<const ThresholdDecl*> thresholds() const override { return {&guide::kGpuMemoryMax}; }
  void evaluate(const Facts& f, const Thresholds& th, std::vector<Finding>& out) const override {
    for (const auto& r : f.memory) {
      double frac = static_cast<double>(r.peak_bytes) / static_cast<double>(r.device_bytes);
      if (frac <= th.get(guide::kGpuMemoryMax)) continue;
      Finding x =
          gainFinding(f, th, "memory.peak", fmt::format("Rank {} peaks at {:.0f}% of GPU memory", r.rank, pct(frac)), 0,
                      "no time gain; out-of-memory risk");
      x.severity = Severity::kCritical;
      x.evidence = {{"peak allocated", static_cast<double>(r.peak_bytes) / (1 << 30), "GiB"},
                    {"device memory", static_cast<double>(r.device_bytes) / (1 << 30), "GiB"}};
      x.explanation = "Above the guide's 95% the allocator fragments and a longer sequence runs out of memory.";
      x.fix = {"x = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)   # recompute activations",
               "# or halve the micro-batch and accumulate gradients over 2 steps"};
      out.push_back(std::move(x));
      return;  // the first rank over the limit stands for all
    }
  }
  void checklist(const Facts& f, const Thresholds& th, const std::vector<Finding>& mine,
                 std::vector<ChecklistItem>& out) const override {
    out.push_back({"memory", fmt::format("GPU memory < {:.0f}%", pct(th.get(guide::kGpuMemoryMax))),
                   statusFrom(mine, f.profile_memory),
                   f.profile_memory ? "from the profiler's memory events"
                                    : "profile with profile_memory=True, or use gpudoctor monitor"});
  }
};

}  // namespace

const Rule& memoryPeakRule() {
  static const MemoryPeak r;
  return r;
}

}  // namespace gpudoctor
