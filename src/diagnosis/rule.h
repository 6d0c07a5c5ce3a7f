// A diagnosis rule: one judgement over the Facts, in its own file under diagnosis/rules/. It
// declares the thresholds it reads, turns Facts into findings, and may answer checklist items.
// Rules are listed in diagnosis/rules/registry.h; that order is the checklist's order.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "diagnosis/facts.h"
#include "diagnosis/finding.h"
#include "diagnosis/thresholds.h"

namespace gpudoctor {

class Rule {
 public:
  virtual ~Rule() = default;
  // Stable id of what the rule judges ("launch.overhead"); its findings use this id or one under it.
  virtual std::string_view id() const = 0;
  // The thresholds the rule reads (the table is assembled from these).
  virtual std::vector<const ThresholdDecl*> thresholds() const { return {}; }
  // Appends the rule's findings.
  virtual void evaluate(const Facts& f, const Thresholds& th, std::vector<Finding>& out) const = 0;
  // Appends the checklist items the rule answers; `mine` are its findings from evaluate.
  virtual void checklist(const Facts& f, const Thresholds& th, const std::vector<Finding>& mine,
                         std::vector<ChecklistItem>& out) const {}
};

// Thresholds every rule's findings use: when a gain is worth a warning or is critical.
inline constexpr ThresholdDecl kMinGainShare{
    "min_gain_share", 0.01, 0, 1, "ratio", "estimated gains below this share of the step are reported as info"};
inline constexpr ThresholdDecl kCriticalGainShare{
    "critical_gain_share", 0.10, 0, 1, "ratio", "estimated gains from this share of the step up are critical"};

// A finding with its gain (ns per step) as ms and as a share of the step, and the severity the
// gain earns: critical from critical_gain_share, warning from min_gain_share, else info.
Finding gainFinding(const Facts& f, const Thresholds& th, std::string id, std::string title, double gain_ns,
                    std::string basis);

// Pass when none of `mine` is a warning or worse; not measurable when `measurable` is false.
CheckStatus statusFrom(const std::vector<Finding>& mine, bool measurable);

// ms from ns, % from a ratio (for titles and evidence).
inline double ms(double ns) { return ns / 1e6; }
inline double pct(double x) { return 100.0 * x; }

}  // namespace gpudoctor
