// `compare`: what changed between two runs. Each rank's mean step, on each side, is split into the
// ranking's categories (compute, communication, host_launch, input, sync, copies, other_idle: they
// add up to the step; means over all steps, since one step books a wait as sync and the next the
// same wait as host), so the step delta is the sum of the categories' deltas exactly; then kernel classes, the kernels
// and collectives that moved most, and the job profile's differences as the likely causes. The verdict is on one step
// definition on both sides (the un-profiled steady-state step, else the traced one), with a confidence range on the
// speedup from each side's step-to-step noise (median/MAD, warm-up and stalled steps left out) and, on the un-profiled
// basis, how far such an estimate is typically off.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "analysis/run_analysis.h"
#include "common/result.h"
#include "model/run_summary.h"

namespace gpudoctor {

// Two un-profiled step estimates of one step are typically this far apart: the median, over every
// pair of the traces of testdata/whatif, of how far the ratio of their estimate errors is from 1
// (bench/replay_calibrate prints it; each estimate alone is 6.3 % off in the median). Two estimates
// closer than this are not told apart (healthy's base and rerun, the same job measured at 14.54 and
// 14.56 ms, are estimated 6.9 % apart).
inline constexpr double kUnprofiledEstimateError = 0.116;

// An un-profiled estimate is off by about this share of the profiler's cost it removed (the share of
// the traced step the estimate takes away): the median over the 88 traces of testdata/whatif of
// |log(estimate / measured)| / that share is 0.28 (a trace with under 10 % removed is 1.2 % off in
// the median, one with 50-70 % removed 13 %). Each side's term in the band.
inline constexpr double kEstimateErrorPerProfilerShare = 0.28;

// Above this share removed, an estimate is the least sure part of a verdict of no change (in
// testdata/whatif the traces with 50-70 % removed are 13 % off in the median, ckpt_large's base 28 %
// at 64 %): compare says so, and how to get a firmer verdict.
inline constexpr double kProfilerShareUnsure = 0.5;

// The share of a traced step that its un-profiled estimate removes as the profiler's cost (-1:
// unknown): what kEstimateErrorPerProfilerShare is a share of.
inline double profilerShareOf(double unprofiled_ns, double traced_ns) {
  if (unprofiled_ns <= 0 || traced_ns <= 0) return -1;
  return std::clamp(1 - unprofiled_ns / traced_ns, 0.0, 1.0);
}

// The traced steps of one job run twice differ by up to this much (the profiler's inflation varies
// between runs: healthy 10 %, hf_gpt2_healthy 14 % in testdata/whatif): the band's floor on the
// traced basis.
inline constexpr double kTracedRunToRun = 0.14;

// A step farther from its rank's median than this many robust standard deviations (1.4826 MAD) and
// than kOutlierShare of the median is a warm-up or stalled step, left out of the noise and medians.
inline constexpr double kOutlierSigmas = 3;
inline constexpr double kOutlierShare = 0.10;

// The band never exceeds this (a band of 100 % could never call a change faster).
inline constexpr double kMaxBand = 0.5;

// One side of a comparison from analyzed traces; unprofiled_step_ns and path: the what-if's estimate
// and its critical path by category, traced_step_ns: the traced steady-state step (-1 and empty: none).
RunSummary summarizeRun(const RunAnalysis& run, double unprofiled_step_ns,
                        std::vector<std::pair<std::string, double>> unprofiled_path = {}, double traced_step_ns = -1);

// A rank's steps, robustly: the median and the step-to-step noise (1.4826 MAD / median) over the
// steps left after the warm-up and stalled ones (kOutlierSigmas, kOutlierShare).
struct StepStats {
  double median_ns = 0, noise = 0;
  size_t kept = 0, left_out = 0;
};
StepStats robustSteps(const std::vector<int64_t>& walls);

struct Delta {
  std::string name;           // kernels: the key they are matched by (class and name stem, numbers as '#')
  double base = 0, next = 0;  // per step (ns), mean over ranks
  double delta() const { return next - base; }
};

struct CompareResult {
  int ranks = 0;
  size_t base_steps = 0, new_steps = 0;      // per rank (the smallest count)
  double base_step_ns = 0, new_step_ns = 0;  // the ranks' mean steps, mean over ranks
  // The ranks' median steps (warm-up and stalled steps left out: robustSteps), mean over ranks (a
  // mean moves with one slow step; the categories use the means, which add up exactly).
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
  // Each side's step-to-step noise (robustSteps: 1.4826 MAD / median, the largest over ranks) and the
  // steps left out of it (warm-up, stalled; the most over ranks).
  double base_noise = 0, new_noise = 0;
  size_t base_left_out = 0, new_left_out = 0;
  // The share of the traced step the un-profiled estimate removes (the profiler's cost); -1: unknown.
  double base_profiler_share = -1, new_profiler_share = -1;
  // The verdict's figure on one step definition on both sides: "un-profiled (replay)" when both have
  // the estimate (the profiler's inflation varies between runs), else "traced (steady state)" when
  // both have the replay's traced step, else "traced (median)".
  std::string basis;
  double base_verdict_ns = 0, new_verdict_ns = 0;
  double change = 0;   // (new - base) / base on the basis
  double speedup = 0;  // base / new on the basis
  // The band: the speedup is known within a factor of (1 + band) either way. In log terms the root
  // sum of squares of each side's noise, on the un-profiled basis each side's estimate error
  // (kEstimateErrorPerProfilerShare x its profiler share) and the floor kUnprofiledEstimateError
  // (traced: kTracedRunToRun); at most kMaxBand.
  double band = 0;
  // What each side's un-profiled step can be at least and at most: the GPU's busy time per step
  // (compute and exposed copies; median over steps, mean over ranks) and the traced step (its
  // median or steady state, the larger). No estimate is needed to know that a base whose GPU alone
  // is busier than the whole new step got faster.
  double base_busy_ns = 0, new_busy_ns = 0;
  double base_busy_noise = 0, new_busy_noise = 0;  // robustSteps' noise of the busy times
  double base_traced_ns = 0, new_traced_ns = 0;
  // speedup / (1 + band) and speedup x (1 + band); on the un-profiled basis kept within
  // base_busy / new_traced .. base_traced / new_busy, each widened by the two sides' step noise.
  double speedup_low = 0, speedup_high = 0;
  std::string verdict;  // "faster" (speedup_low > 1), "slower" (speedup_high < 1), "no change beyond noise"
  // The two runs look like different jobs (another GPU, world size or model): the comparison may
  // not mean what it seems.
  std::vector<std::string> warnings;
  std::vector<Delta> classes;  // kernel classes per step, largest |delta| first
  std::vector<Delta> kernels;  // kernels in both sides' top lists, matched by class + stem
  // kernels[i] as the traces spell it, for readers: the class, then the costliest kernel of the stem
  // without its template arguments and parameters, its numbers kept.
  std::vector<std::string> kernels_shown;
  std::vector<std::string> kernels_only;        // in one side's top list only ("new: ...", "gone: ...")
  std::vector<std::string> kernels_only_shown;  // kernels_only[i] with the kernel's name as kernels_shown spells it
  std::vector<Delta> collectives;               // by kind, dtype and size
  std::vector<std::string> job_changes;         // "precision: fp32 -> bf16"
  std::vector<std::string> notes;
};

// Error when the rank counts differ, or a side has no steps.
Result<CompareResult> compareRuns(const RunSummary& base, const RunSummary& next);

// True when `next` is slower than `base` by more than pct percent beyond the noise band: its step
// over base's exceeds (1 + band) x (1 + pct / 100).
bool slowerThan(const CompareResult& r, double pct);

}  // namespace gpudoctor
