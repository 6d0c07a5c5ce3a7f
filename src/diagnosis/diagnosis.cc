#include "diagnosis/diagnosis.h"

#include <algorithm>
#include <optional>

#include "diagnosis/rules/registry.h"
#include "diagnosis/what_if.h"

namespace gpudoctor {

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
