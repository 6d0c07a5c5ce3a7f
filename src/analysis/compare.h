// `compare`: what changed between two runs. Each rank's mean step, on each side, is split into the
// ranking's categories (compute, communication, host_launch, input, sync, copies, other_idle: they
// add up to the step; means over all steps, since one step books a wait as sync and the next the
// same wait as host), so the step delta is the sum of the categories' deltas exactly; then kernel classes, the kernels and collectives that moved most, and the job profile's
// differences as the likely causes. Noise: each side's step-to-step spread.
#pragma once
#include <string>
#include <vector>

#include "analysis/run_analysis.h"
#include "common/result.h"
#include "model/run_summary.h"

namespace gpudoctor {

// Two un-profiled step estimates of one step are typically this far apart: the median, over every
// pair of the 73 traces of testdata/whatif (the held-out ones of sessions 15-17 included), of how
// far the ratio of their estimate errors is from 1 (bench/replay_calibrate prints it: 11.6 % in
// session 17, 10.8 % over its first 71 traces, 12.1 % before its graph-launch change; 10.2 % over the
// first 52; each estimate alone 6.3 % median). Two estimates closer than this are not told apart
// (healthy's base and rerun, the same job measured at 14.54 and 14.56 ms, are estimated 6.9 % apart).
inline constexpr double kUnprofiledEstimateError = 0.116;

// One side of a comparison from analyzed traces; unprofiled_step_ns and path: the what-if's estimate
// and its critical path by category (-1 and empty: none).
RunSummary summarizeRun(const RunAnalysis& run, double unprofiled_step_ns,
                        std::vector<std::pair<std::string, double>> unprofiled_path = {});

struct Delta {
  std::string name;
  double base = 0, next = 0;  // per step (ns), mean over ranks
  double delta() const { return next - base; }
};

struct CompareResult {
  int ranks = 0;
  size_t base_steps = 0, new_steps = 0;  // per rank (the smallest count)
  double base_step_ns = 0, new_step_ns = 0;  // the ranks' mean steps, mean over ranks
  // The ranks' median steps, mean over ranks: the traced verdict's figure (a mean moves with one
  // slow step; the categories use the means, which add up exactly).
  double base_median_ns = 0, new_median_ns = 0;
  std::vector<Delta> categories;  // the 7 categories; their deltas sum to new_step_ns - base_step_ns
  // The un-profiled step (the replay's estimate) by its critical path's categories, when both sides
  // have it: their deltas sum to new_verdict_ns - base_verdict_ns. Empty otherwise.
  std::vector<Delta> unprofiled_categories;
  // Both grouped (analysis/replay categoryGroup: compute, communication, copies, host), largest
  // |delta| first.
  std::vector<Delta> groups, unprofiled_groups;
  std::vector<std::vector<Delta>> rank_categories;  // per rank (in rank order), the same
  std::vector<int> rank_ids;
  double base_spread = 0, new_spread = 0;  // (max - min) / mean of the steps, the largest over ranks
  // The noise band: the larger spread (a share of the step); on the un-profiled basis at least
  // kUnprofiledEstimateError, how far two estimates of one step typically are apart.
  double band = 0;
  // The verdict is on the un-profiled estimates when both sides have one (the profiler's inflation
  // varies between runs of one job), else on the traced steps.
  std::string basis;  // "un-profiled (replay)" or "traced"
  double base_verdict_ns = 0, new_verdict_ns = 0;
  double change = 0;     // (new - base) / base on the basis
  std::string verdict;   // "faster", "slower", "no change beyond noise"
  std::vector<Delta> classes;      // kernel classes per step, largest |delta| first
  std::vector<Delta> kernels;      // kernels in both sides' top lists, matched by class + stem
  std::vector<std::string> kernels_only;  // in one side's top list only ("new: ...", "gone: ...")
  std::vector<Delta> collectives;  // by kind, dtype and size
  std::vector<std::string> job_changes;  // "precision: fp32 -> bf16"
  std::vector<std::string> notes;
};

// Error when the rank counts differ, or a side has no steps.
Result<CompareResult> compareRuns(const RunSummary& base, const RunSummary& next);

// True when `next` is slower than `base` by more than pct percent beyond the noise band.
bool slowerThan(const CompareResult& r, double pct);

}  // namespace gpudoctor
