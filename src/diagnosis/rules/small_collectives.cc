// Many latency-bound collectives per step: fewer, larger buckets move the same bytes faster.
#include <fmt/format.h>

#include "diagnosis/rules/registry.h"

namespace gpudoctor {
namespace {

constexpr ThresholdDecl kSmallBytes{
    "small_collective_bytes", 1 << 20, 0, 1e12, "bytes", "collectives smaller than this are latency-bound"};
constexpr ThresholdDecl kSmallPerStepMax{
    "small_collectives_per_step_max", 10, 0, 1e6, "count", "small collectives per step before bucketing is advised"};

class SmallCollectives : public Rule {
 public:
  std::string_view id() const override { return "communication.small_collectives"; }
  std::vector<const ThresholdDecl*> thresholds() const override { return {&kSmallBytes, &kSmallPerStepMax}; }
  void evaluate(const Facts& f, const Thresholds& th, std::vector<Finding>& out) const override {
    double small_per_step = 0, small_bytes = th.get(kSmallBytes);
    for (const auto& c : f.collectives)
      if (c.bytes > 0 && static_cast<double>(c.bytes) < small_bytes) small_per_step += static_cast<double>(c.count);
    small_per_step /= f.steps;
    if (small_per_step <= th.get(kSmallPerStepMax)) return;
    Finding x = gainFinding(
        f, th, "communication.small_collectives",
        fmt::format("{:.0f} collectives per step are smaller than {:.0f} KiB", small_per_step, small_bytes / 1024), 0,
        "not estimated: latency-bound collectives cost a fixed time each");
    x.severity = Severity::kWarning;
    x.evidence = {{"small collectives", small_per_step, "per step"}};
    x.explanation = "Small collectives are latency-bound; fewer, larger buckets move the same bytes faster.";
    x.fix = {"model = DDP(model, bucket_cap_mb=50)   # fewer, larger gradient buckets"};
    out.push_back(std::move(x));
  }
  void checklist(const Facts& f, const Thresholds&, const std::vector<Finding>& mine,
                 std::vector<ChecklistItem>& out) const override {
    out.push_back({"communication", "Collectives large enough (bucketing)", statusFrom(mine, f.mean.comm > 0),
                   fmt::format("{} collective groups in the trace", f.collective_groups)});
  }
};

}  // namespace

const Rule& smallCollectivesRule() {
  static const SmallCollectives r;
  return r;
}

}  // namespace gpudoctor
