#include "diagnosis/diagnosis.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "diagnosis/job_aware.h"
#include "diagnosis/job_kind.h"
#include "diagnosis/rules/registry.h"
#include "diagnosis/thresholds.h"
#include "diagnosis/what_if.h"

namespace gpudoctor {

namespace {

// The ranking's category a finding's fix works on, by its id's first part ("" for none).
std::string_view categoryOfFinding(std::string_view id) {
  if (std::string_view fix = fixOfFinding(id); !fix.empty()) return categoryOfFix(fix);
  std::string_view area = id.substr(0, id.find('.'));
  if (area == "input" || area == "sync" || area == "communication" || area == "copies") return area;
  if (area == "launch") return "host_launch";
  if (area == "precision" || area == "attention" || area == "optimizer" || area == "layout") return "compute";
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
  if (!d.ranking.empty()) d.primary = leadingCategory(facts);
  d.groups = facts.groups;
  for (const Rule* r : ruleRegistry()) {
    std::vector<Finding> mine;
    r->evaluate(facts, th, mine);
    r->checklist(facts, th, mine, d.checklist);
    for (auto& f : mine) d.findings.push_back(std::move(f));
  }
  // What does not fit the job's kind goes first: it is neither merged, predicted nor planned.
  fitJobKind(facts.job, d.findings);
  // The headline (the first rule's) leads; the rest follow by estimated gain, then severity.
  mergeHeadline(d.findings);
  if (!d.findings.empty())
    std::stable_sort(d.findings.begin() + 1, d.findings.end(), [](const Finding& a, const Finding& b) {
      if (a.gain_ms_per_step != b.gain_ms_per_step) return a.gain_ms_per_step > b.gain_ms_per_step;
      return a.severity < b.severity;
    });
  return d;
}

namespace {

// The headline by the replay: the category of the fix that buys most (at least 5 %), else the one
// that leads the un-profiled step's critical path; the idle ranking's leader stays in the ranking.
void reheadByReplay(const Facts& facts, const Thresholds& th, Diagnosis& d) {
  if (!d.what_if.available || d.findings.empty() || d.findings.front().id.rfind("bottleneck.", 0) != 0) return;
  // The group stays the trace's largest; inside it, the category the replay finds limiting.
  const std::string group = facts.groups.empty() ? "" : facts.groups.front().category;
  std::string category = d.primary, why;
  auto inGroup = [&](std::string_view c) { return !c.empty() && groupOf(c) == group; };
  if (!d.plan.empty() && d.plan.front().speedup >= 1.05) {
    const PlanStep& p = d.plan.front();
    // A fix of no one category (removing recomputation) works on what limits the step.
    std::string c(categoryOfFix(p.fix));
    if (c.empty()) c = d.what_if.bottleneck;
    if (inGroup(c)) {
      category = c;
      why = fmt::format(
          "The replay finds that fixing it buys most: {} ({}) takes the un-profiled step from {:.2f} to "
          "{:.2f} ms ({:.2f}x).",
          p.fix, p.finding, d.what_if.unprofiled_step_ns / 1e6, p.step_ns / 1e6, p.speedup);
    } else {
      why = fmt::format(
          "The replay's best single fix works on {} instead: {} ({}) takes the un-profiled step from "
          "{:.2f} to {:.2f} ms ({:.2f}x).",
          c.empty() ? "another category" : c, p.fix, p.finding, d.what_if.unprofiled_step_ns / 1e6, p.step_ns / 1e6,
          p.speedup);
    }
  } else if (!d.what_if.bottleneck.empty()) {
    // The replay's limiting category heads only where the trace gives it weight: a category of a
    // sliver of the step (host_launch at 0.1 % beside a 98 % sync) does not replace the leader.
    auto shareOf = [&](std::string_view c) {
      for (const auto& b : d.ranking)
        if (b.category == c) return b.share;
      return 0.0;
    };
    const double lead = d.ranking.empty() ? 0 : d.ranking.front().share;
    if (inGroup(d.what_if.bottleneck) && shareOf(d.what_if.bottleneck) >= lead / 2) category = d.what_if.bottleneck;
    why =
        "No fix the replay can edit buys 5 %; " + d.what_if.bottleneck + " leads the un-profiled step's critical path.";
  } else {
    return;
  }
  d.findings.front() = headlineFinding(facts, th, category, why);
  d.primary = category;
  mergeHeadline(d.findings);
}

}  // namespace

namespace {

// The IO check was judged on the trace's waits; a loader finding the replay added (a DataLoader pool
// that holds the un-profiled step) fails it too.
void failIoCheckOnPool(Diagnosis& d) {
  const bool pool = std::any_of(d.findings.begin(), d.findings.end(), [](const Finding& f) {
    return f.id == "input.loader_on_critical_path" &&
           (f.severity == Severity::kCritical || f.severity == Severity::kWarning);
  });
  if (!pool) return;
  for (ChecklistItem& c : d.checklist)  // the loader rule's item, not the workers' or the pinning's
    if (c.area == "io" && c.item.rfind("IO wait", 0) == 0 && c.status != CheckStatus::kFail) {
      c.status = CheckStatus::kFail;
      c.evidence += "; the un-profiled replay: a DataLoader pool sets the step";
    }
}

// The headline says what the job's kind left out (inference, a graph capture).
void noteJobKind(const JobProfile& job, Diagnosis& d) {
  const std::string note = jobKindNote(job);
  if (note.empty() || d.findings.empty() || d.findings.front().id.rfind("bottleneck.", 0) != 0) return;
  d.findings.front().explanation += " " + note;
}

}  // namespace

Diagnosis diagnose(const RunAnalysis& run, const Thresholds& th, const DiagnosisInputs& in, const Ceilings* ceilings) {
  const Facts facts = buildFacts(run, in);
  Diagnosis d = diagnose(facts, th);
  std::optional<Ceilings> builtin;
  if (!ceilings && !run.ranks.empty() && !run.ranks.front().trace->devices.empty()) {
    builtin = builtinCeilings(run.ranks.front().trace->devices.front().name);
    if (builtin) ceilings = &*builtin;
  }
  predictFixes(run, ceilings, d, th, in.measured_step_ns);
  // A finding with a prediction is graded by it, not by its bound: the step share the fix saves
  // (under 5 %, the replay's own accuracy, info; from critical_gain_share up, critical).
  for (Finding& f : d.findings) {
    if (!f.what_if.available || f.what_if.speedup <= 0) continue;
    const double saved = 1 - 1 / f.what_if.speedup;
    f.severity = saved < 0.05                          ? Severity::kInfo
                 : saved >= th.get(kCriticalGainShare) ? Severity::kCritical
                                                       : Severity::kWarning;
  }
  // After the headline: by severity (predictions graded above), within it the predicted speedups
  // first, largest first, then the upper bounds as they were ordered.
  if (d.findings.size() > 1)
    std::stable_sort(d.findings.begin() + 1, d.findings.end(), [](const Finding& a, const Finding& b) {
      if (a.severity != b.severity) return a.severity < b.severity;
      double sa = a.what_if.available ? a.what_if.speedup : 0, sb = b.what_if.available ? b.what_if.speedup : 0;
      return sa > sb;
    });
  failIoCheckOnPool(d);
  reheadByReplay(facts, th, d);
  respectJobProfile(run.job, d.findings);  // last: the re-headed headline's fix lines too
  noteJobKind(run.job, d);
  return d;
}

Diagnosis diagnoseRun(const RunAnalysis& run, const Thresholds& th, const DiagnosisInputs& in, const Ceilings* ceilings,
                      const DiagnoseRunOptions& opt) {
  if (opt.what_if) return diagnose(run, th, in, ceilings);
  Diagnosis d = diagnose(buildFacts(run, in), th);
  noteJobKind(run.job, d);
  d.what_if.basis = "not run (--no-what-if)";
  if (opt.step_estimate) d.step_estimate = estimateStep(run, in.measured_step_ns);
  return d;
}

}  // namespace gpudoctor
