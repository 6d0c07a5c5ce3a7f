// A fix the what-if can apply: an edit of the replay graph (analysis/replay/replay.h) that stands for a change
// to the job, with the findings whose advice it is and the ranking category it takes time from. One
// file per fix under diagnosis/fixes/, listed in fixes/registry.h; its measured constants live there.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "analysis/replay/replay.h"
#include "analysis/run_analysis.h"
#include "model/ceilings.h"

namespace gpudoctor {

// What an edit may read: the GPU's ceilings (null: unknown GPU) and the run (null: edit without it).
struct FixInputs {
  const Ceilings* ceilings = nullptr;
  const RunAnalysis* run = nullptr;
};

class Fix {
 public:
  virtual ~Fix() = default;
  // Stable id: "bf16", "loader_workers", ...
  virtual std::string_view id() const = 0;
  // The findings whose advice this fix is (a finding is answered by the first fix listing it).
  virtual std::vector<std::string_view> answers() const = 0;
  // The ranking category whose time the fix removes ("compute", "input", ...); "" when it is whatever
  // limits the step (checkpointing, accumulation).
  virtual std::string_view category() const = 0;
  // Applies the fix to `edits` (the un-profiled job's edits) in place. False when what it needs is
  // missing (no ceilings, no such work in the run); `basis` says how the edit was made.
  virtual bool edit(const FixInputs& in, ReplayEdits& edits, std::string& basis) const = 0;
  // Another way to apply the fix, replayed beside it and reported as its alternative (a registered
  // fix's id whose edit applies it), or "" for none.
  virtual std::string_view alternative() const { return ""; }
};

}  // namespace gpudoctor
