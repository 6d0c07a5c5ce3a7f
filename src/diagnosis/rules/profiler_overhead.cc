// The profiler's own options inflate host time; and the monitoring items of the checklist (what a
// trace shows, and what only the live monitor can).
#include <fmt/format.h>

#include "diagnosis/rules/registry.h"

namespace gpudoctor {
namespace {

class ProfilerOverhead : public Rule {
 public:
  std::string_view id() const override { return "profiler.overhead"; }
  std::vector<const ThresholdDecl*> thresholds() const override { return {&guide::kCpuMax}; }
  void evaluate(const Facts& f, const Thresholds& th, std::vector<Finding>& out) const override {
    if (!f.record_shapes && !f.with_stack && !f.profile_memory) return;
    std::string opts;
    if (f.record_shapes) opts += "record_shapes=True ";
    if (f.with_stack) opts += "with_stack=True ";
    if (f.profile_memory) opts += "profile_memory=True ";
    Finding x = gainFinding(f, th, "profiler.overhead", "Profiler options add host overhead: " + opts, 0,
                            "no gain in production; host-side figures here are upper bounds");
    x.severity = Severity::kInfo;
    x.explanation =
        "These options record extra data for every operator, so host time (and host-bound idle) in "
        "this trace is longer than without the profiler. record_shapes lets gpudoctor tell BF16 from FP16.";
    x.fix = {"torch.profiler.profile(activities=[CPU, CUDA], record_shapes=True,",
             "                       with_stack=False, profile_memory=False)"};
    out.push_back(std::move(x));
  }
  void checklist(const Facts& f, const Thresholds& th, const std::vector<Finding>&,
                 std::vector<ChecklistItem>& out) const override {
    out.push_back({"monitoring", "Profiler trace analyzed per step", CheckStatus::kPass,
                   fmt::format("{:.0f} steps over {} rank(s)", f.steps, f.ranks)});
    out.push_back({"monitoring", fmt::format("Host CPU < {:.0f}% and live GPU metrics", pct(th.get(guide::kCpuMax))),
                   CheckStatus::kUnknown,
                   "not in a profiler trace: watch with gpudoctor monitor (or nvidia-smi dmon)"});
  }
};

}  // namespace

const Rule& profilerOverheadRule() {
  static const ProfilerOverhead r;
  return r;
}

}  // namespace gpudoctor
