#include "diagnosis/diagnosis.h"

#include <algorithm>
#include <optional>

#include "diagnosis/rules/registry.h"
#include "diagnosis/what_if.h"

namespace gpudoctor {

namespace {

// The ranking's category a finding's fix works on, by its id's first part ("" for none).
std::string_view categoryOfFinding(std::string_view id) {
  std::string_view area = id.substr(0, id.find('.'));
  if (area == "input" || area == "sync" || area == "communication" || area == "copies") return area;
  if (area == "launch") return "host_launch";
  if (area == "precision" || area == "attention" || area == "optimizer") return "compute";
  if (area == "nccl") return "communication";
  return "";
}

// The primary bottleneck is a headline over the findings: where findings address its category,
// it names them instead of repeating their fix and their gain.
void mergeHeadline(std::vector<Finding>& findings) {
  if (findings.empty() || findings.front().id.rfind("bottleneck.", 0) != 0) return;
  Finding& head = findings.front();
  const std::string_view category = std::string_view(head.id).substr(std::string_view("bottleneck.").size());
  std::string by;
  for (size_t k = 1; k < findings.size(); ++k)
    if (categoryOfFinding(findings[k].id) == category && findings[k].severity < Severity::kInfo)
      by += (by.empty() ? "" : ", ") + findings[k].id;
  if (by.empty()) return;
  head.fix.clear();
  head.severity = Severity::kInfo;  // the findings it names carry the severity
  head.gain_ms_per_step = 0;
  head.gain_share = 0;
  head.gain_basis = "headline: the findings it names carry the fixes and their gains";
  head.explanation += " Addressed by: " + by + ".";
}

}  // namespace

Diagnosis diagnose(const Facts& facts, const Thresholds& th) {
  Diagnosis d;
  d.step_ms = ms(facts.mean.wall);
  d.ranking = facts.ranking;
  if (!d.ranking.empty()) d.primary = d.ranking.front().category;
  for (const Rule* r : ruleRegistry()) {
    std::vector<Finding> mine;
    r->evaluate(facts, th, mine);
    r->checklist(facts, th, mine, d.checklist);
    for (auto& f : mine) d.findings.push_back(std::move(f));
  }
  // The headline (the first rule's) leads; the rest follow by estimated gain, then severity.
  mergeHeadline(d.findings);
  if (!d.findings.empty())
    std::stable_sort(d.findings.begin() + 1, d.findings.end(), [](const Finding& a, const Finding& b) {
      if (a.gain_ms_per_step != b.gain_ms_per_step) return a.gain_ms_per_step > b.gain_ms_per_step;
      return a.severity < b.severity;
    });
  return d;
}

Diagnosis diagnose(const RunAnalysis& run, const Thresholds& th, const DiagnosisInputs& in, const Ceilings* ceilings) {
  Diagnosis d = diagnose(buildFacts(run, in), th);
  std::optional<Ceilings> builtin;
  if (!ceilings && !run.ranks.empty() && !run.ranks.front().trace->devices.empty()) {
    builtin = builtinCeilings(run.ranks.front().trace->devices.front().name);
    if (builtin) ceilings = &*builtin;
  }
  predictFixes(run, ceilings, d);
  return d;
}

}  // namespace gpudoctor
