// For the rules' unit tests: hand-made Facts (no trace), and one rule run against a table of only
// the thresholds it declares, so a rule that reads an undeclared threshold fails its own test.
#pragma once
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "diagnosis/rules/registry.h"

namespace gpudoctor::testing {

// One rank, 10 steps of 10 ms, the GPU computing 9.5 ms of each: a healthy job.
inline Facts healthyFacts() {
  Facts f;
  f.steps = 10;
  f.ranks = 1;
  f.mean.wall = 10e6;
  f.mean.busy = 9.5e6;
  f.mean.compute = 9.5e6;
  f.mean.idle = 0.5e6;
  f.mean.idle_other = 0.5e6;
  f.compute_major = 9;
  f.ranking = rankBottlenecks(f.mean);
  return f;
}

struct RuleRun {
  std::vector<Finding> findings;
  std::vector<ChecklistItem> checklist;
  // The finding with this id, or null.
  const Finding* find(const std::string& id) const {
    for (const auto& f : findings)
      if (f.id == id) return &f;
    return nullptr;
  }
};

// The table a rule may read: its own declarations and the shared gain thresholds.
inline Thresholds tableOf(const Rule& r) {
  auto decls = r.thresholds();
  for (const ThresholdDecl* d : ruleCoreThresholds()) decls.push_back(d);
  return Thresholds::of(decls);
}

// Runs one rule as diagnose() does (ranking recomputed from the means).
inline RuleRun run(const Rule& r, Facts f, const Thresholds* th = nullptr) {
  f.ranking = rankBottlenecks(f.mean);
  Thresholds own = tableOf(r);
  const Thresholds& t = th ? *th : own;
  RuleRun out;
  r.evaluate(f, t, out.findings);
  r.checklist(f, t, out.findings, out.checklist);
  return out;
}

// The value of a finding's evidence by name (a test failure when absent).
inline double evidenceOf(const Finding& f, const std::string& name) {
  for (const auto& e : f.evidence)
    if (e.name == name) return e.value;
  ADD_FAILURE() << f.id << " has no evidence " << name;
  return -1;
}

}  // namespace gpudoctor::testing
