// What each fix buys, predicted by replaying the trace (analysis/replay) with the fix as an edit of
// the graph, against the job as it runs un-profiled (the profiler's host cost removed); and the
// plan: the fixes applied one after another, the one that gains most first, with what limits the
// step after each. Fixes the replay cannot edit keep their bounds.
#pragma once
#include <string>
#include <string_view>

#include "analysis/replay.h"
#include "analysis/run_analysis.h"
#include "model/ceilings.h"

namespace gpudoctor {

struct Diagnosis;

// The profiler's host cost per recorded host event (operator, annotation, Python function), fitted
// by bench/replay_calibrate on testdata/whatif: un-profiled steps predicted within 6.0 % median,
// 46 % worst (activation checkpointing), on 31 traces of 11 jobs.
inline constexpr int64_t kProfilerHostEventNs = 5500;

// A fused AdamW step reads 4 and writes 3 tensors per parameter in one pass; the unfused paths
// (foreach or per parameter) make about 25 such accesses (12 passes over 1-3 tensors): the
// optimizer's GPU work x 7/25.
inline constexpr double kFusedOptimizerGpuScale = 7.0 / 25.0;

// Adds the edit of a fix to `edits`: "bf16" (FP32/TF32 GEMMs at the BF16 rate of `c`, elementwise
// kernels at half the bytes), "loader_workers", "no_host_syncs", "pinned_copies" (pageable at the
// pinned rate of `c`), "cuda_graphs", "fused_optimizer", "straggler_at_median" (the rank with the
// most compute per step at the median of the others: needs `run` with 3 or more ranks, or 2).
// False when the fix is unknown or what it needs is missing; `basis` says how the edit was made.
bool fixEdit(std::string_view fix, const Ceilings* c, const RunAnalysis* run, ReplayEdits& edits, std::string& basis);

// The fix a finding advises, by its id ("" for none the replay can edit).
std::string_view fixOfFinding(std::string_view finding_id);

// Replays the run unedited, un-profiled, and once per finding with an editable fix; fills
// d.what_if, each such finding's what_if, and d.plan. `c`: ceilings for the edits (null: unknown GPU).
void predictFixes(const RunAnalysis& run, const Ceilings* c, Diagnosis& d);

}  // namespace gpudoctor
