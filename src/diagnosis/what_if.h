// What each fix buys, predicted by replaying the trace (analysis/replay) with the fix as an edit of
// the graph, against the job as it runs un-profiled (the profiler's host cost removed); and the
// plan: the fixes applied one after another, the one that gains most first, with what limits the
// step after each. Fixes the replay cannot edit keep their bounds.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "analysis/replay/replay.h"
#include "analysis/run_analysis.h"
#include "diagnosis/diagnosis.h"
#include "diagnosis/thresholds.h"
#include "model/ceilings.h"

namespace gpudoctor {

struct Diagnosis;

// The profiler's own cost: per recorded host event (operator, annotation, Python function), per
// runtime/driver call and per gap between GPU work on a stream, the first two at each process's
// host speed (kProfilerSpeed* below). The per-event cost and the speed exponent are fitted by
// bench/replay_calibrate --fit-on on the first 13 jobs of testdata/whatif and checked on the 15 others
// (un-profiled steps within 7.6 % median, 43 % worst on those).
inline constexpr int64_t kProfilerHostEventNs = 4500;
// ... but an operator inside an in-process DataLoader's fetch (decoding and transforms on CPU tensors,
// no launch under it) costs what a CPU operator alone costs: 817 ns in
// scripts/probes/profiler_event_cost.py's cpu_op workload (one tiny CPU operator per iteration, CPU +
// CUDA activities, timed with and without the profiler; testdata/whatif/profiler_event_cost_h200.jsonl),
// at the host's speed like the rest. The training operators' 4.5 us takes a third to a half of such a
// fetch away: resnet18_jpeg_workers0 (H100) is then estimated at 73.4 ms against 106.8 ms measured in
// the trace's own process, at 103.0 ms with this.
inline constexpr int64_t kProfilerLoaderEventNs = 817;
// On the GPU, CUPTI's kernel records lengthen the gap between back-to-back pieces of work, not the
// work: validation/probes/profiler_gpu_cost.py queues 100-400 kernels behind a sleep (elementwise
// kernels of 4 Ki-64 Mi elements, GEMMs of 512-4096) and times them with CUDA events with and without
// torch.profiler, in two processes on an H200: 0.06-0.21 us more per kernel (median 0.12 us; 0.05-9 %
// of the kernel's period), the traced kernels' durations as long as the un-profiled period allows
// (validation/results/h200_2026-12-04/probe_gpu_cost_*.jsonl).
inline constexpr int64_t kProfilerGpuGapNs = 120;
// The per-call costs are measured, not fitted: the fit cannot tell a call's cost from an operator's
// (with the per-call cost held at 750, 1,100 or 1,500 ns it scores 8.8 % mean alike). Under
// torch.profiler (CPU + CUDA, schedule wait=1), K calls made from C outside any operator, timed with
// and without it in one process (scripts/probes/profiler_call_cost.py and .cu,
// testdata/whatif/profiler_call_cost_h200.jsonl): on a first H200 machine (two processes; an
// un-profiled launch took 5.6 us, nearer the validation traces' 5-10 us traced) a kernel launch cost
// 1.06-1.63 us through cudaLaunchKernel, cudaLaunchKernelEx and cuLaunchKernel (median of six 1.09),
// cudaMemsetAsync 0.75-0.78 us; on a second, faster one (four processes; launches 3.8-5.2 us) 0.14-2.2
// us (median of twelve 0.77) and 0.92-0.98 us. The first machine's figures are kept; the pooled
// medians (0.87 us a launch, 2.05 us below; scored as 0.9 and 2.05 with the per-event cost refitted to
// 4.75 us) do within noise as well (docs/whatif_validation.md). Per call that launches GPU
// work or waits for it:
inline constexpr int64_t kProfilerApiCallNs = 1100;
// ... per call that launches nothing and waits for nothing. cudaGetErrorString,
// cudaDeviceGetAttribute, cudaEventRecord and cudaStreamWaitEvent cost 443, 583, 650 and 530 ns
// each made from Python (scripts/probes/profiler_api_cost.py, testdata/whatif/profiler_api_cost_h200.jsonl);
// cudaGetErrorString 0.17-0.24 us made from C. cuDNN's LSTM makes 13 such calls per operator.
inline constexpr int64_t kProfilerIdleCallNs = 550;
// ... and per cudaFuncGetAttributes, which cost 2.38 and 2.85 us on the first machine (4-5x the calls
// above; traced at 3.2-3.8 us against 1.4 us without the profiler), 1.58-2.16 us on the second:
// cuDNN's LSTM makes 617 a step.
inline constexpr int64_t kProfilerAttrCallNs = 2600;
// Tried and removed (docs/whatif_validation.md): a cost per profiler
// option (an extra cost per operator with recorded shapes, one of its own per Python event). Fitted,
// it cut the un-profiled steps' error (median 9.4 -> 5.2 %) but made the fixes' predictions worse.
// Measured on the jobs' own steps (scripts/probes/profiler_job_cost.py): record_shapes
// and profile_memory add nothing measurable, the default options cost 2.2-5.8 us per operator
// (median 4.6: the 5 us per host event here), a Python event 0.36 us (median over jobs, each job's
// figure at the host's noise): charged so, one with_stack job gains what another loses, so they
// stay at the per-event cost.
// CUDA graph replays under the profiler (testdata/whatif cuda_graphs traces): cudaGraphLaunch took
// 0.98 ms for 494 nodes and 12.3 ms for about 5,000 (2.0 and 2.4 us per node); the graph's first
// kernel started up to 0.34 ms after the call did, and the GPU idled up to 9 ms between the graph's
// kernels while the call submitted them (3-4 us every 9-11 kernels). Without the profiler the GPU
// idles 0.29-0.47 us between a graph's nodes, median 0.33 (scripts/probes/graph_gap_cost.py, graphs of
// 1,000-4,000 nodes, testdata/whatif/graph_gap_h200.jsonl): longer gaps, and a longer wait from the
// launch call's start to a node, are the profiler's, capped at kProfilerGraphGapCapNs. With it the
// nine graphed traces' un-profiled steps are within -0.5..+7.9 % but for the host-bound
// scaler_graphs_mid (+10.5 %); with a 3 us cap, and the launch's wait kept,
// +3.7..+21.3 %.
inline constexpr int64_t kProfilerGraphNodeNs = 2000;
inline constexpr int64_t kProfilerGraphGapCapNs = 400;

// The profiler's cost per event at each process's host speed: x (ReplayModel::hostGapP25 /
// kProfilerSpeedRefNs)^exponent (0: the same everywhere). The quarter-point of the host time before
// each recorded event ran 0.46-2.46 us over the validation traces (the same job 0.68-1.03 us from one
// process to the next); the host runs at two speeds about 2x apart, and the profiler's cost follows
// it. In one H100 process the default options cost 2.0-2.4 us per recorded event on four host-bound
// jobs alike (validation/results/h100_2026-12-07d/results_P{1,2}.jsonl).
// With the default options (no Python frames, no recorded shapes) the exponent is 1.2: the largest
// that keeps the old set's scores as they were or better (un-profiled 5.2 % median, 8.4 % mean, 42.2 %
// worst; fixes 7.4 % median, 43.7 % worst), fitted on the lab's fit part (un-profiled worst 35.2 ->
// 26.7 %) and on 20 traces of four fit jobs each taken right after an un-profiled round in one process
// (validation/probes/profiler_speed_probe.py: mean error 16.5 -> 12.2 %).
inline constexpr int64_t kProfilerSpeedRefNs = 1000;
inline constexpr double kProfilerSpeedExponent = 1.2;
// ... where the trace was recorded with with_stack or record_shapes, whose own work falls in the gaps
// (ReplayModel::profilerOptionsInGaps): there the gauge reads that work as much as the host's speed,
// and the exponent fitted across the old set's jobs stays (held out by job, it took the un-profiled
// steps' median error 6.0 -> 5.4 %, the worst 45.7 -> 33.4 %).
inline constexpr double kProfilerSpeedExponentOptions = 0.6;
// The gauge of the host's speed: the gaps above, the median kernel-launch call
// (ReplayModel::launchCallP50, x (its ns / kProfilerLaunchRefNs)^exponent), or the median dispatch
// inside operators (ReplayModel::dispatchP50, x (its ns / kProfilerDispatchRefNs)^exponent: 0.70-8.2 us
// over the old set's traces, median 1.52).
enum class ProfilerSpeedGauge : uint8_t { kHostGapP25, kLaunchCallP50, kDispatchP50 };
inline constexpr ProfilerSpeedGauge kProfilerSpeedGauge = ProfilerSpeedGauge::kHostGapP25;
inline constexpr int64_t kProfilerLaunchRefNs = 8000;
inline constexpr int64_t kProfilerDispatchRefNs = 1500;
std::vector<double> profilerSpeedScale(const ReplayModel& model, double exponent = kProfilerSpeedExponent,
                                       ProfilerSpeedGauge gauge = kProfilerSpeedGauge,
                                       double options_exponent = kProfilerSpeedExponentOptions);

// The edits that remove the profiler's own cost (the un-profiled job), with the constants above;
// with a model, at each of its ranks' host speed.
ReplayEdits unprofiledEdits(const ReplayModel* model = nullptr);

// Per rank: the un-profiled host's time per recorded operator (ReplayEdits::rank_op_ns), ns: `replay`'s
// (the un-profiled job's) host step, the median over its windows, over ReplayModel::operatorsPerStep;
// 0 (the probe host's unit) where either is unknown or the host does not set the step (its step then
// holds waits).
std::vector<double> hostTimePerOperator(const ReplayModel& model, const Replay& replay);

// A step measured without the profiler (the job's own logs: its iteration time at the same
// configuration) anchors the profiler's host cost (per host event and runtime call, every rank's;
// the part that follows the host's speed) x one factor, found by bisection,
// so that the replayed un-profiled step matches it. The trace alone estimates that cost from its
// host's speed (above); a measured step removes that estimate's error from every prediction.
struct ProfilerAnchor {
  bool reached = false;  // the replay matches measured_ns within kAnchorTolerance
  bool possible = true;  // false: no factor in [0, kAnchorMaxFactor] gives the measured step
  double factor = 1;     // the profiler's cost x this (0: none removed)
  double step_ns = 0;    // the replayed un-profiled step at that factor
  std::string note;      // where not reached: why (the measured step outside what the replay can give)
};
inline constexpr double kAnchorTolerance = 0.002;
// A measured step that no factor in [0, kAnchorMaxFactor] gives, further than this from the nearest,
// is not the traced job's (another batch, model or machine): analyze refuses it. Otherwise the
// nearest within the factor's range is kept, with a note.
inline constexpr double kAnchorMaxMiss = 0.10;
inline constexpr double kAnchorMaxFactor = 8;
// The factor is kept within [1/this, this]: the host runs at speeds up to about 2x apart (kProfilerSpeed*
// above), and a measured step further off is the job's own difference (noise in its timing, a loader or
// GPU running differently), which a larger factor would only push into the predictions.
inline constexpr double kAnchorFactorRange = 2;
// How far the un-profiled step estimated from a trace alone was from the measured one over the
// validation lab's 40 scored jobs (docs/validation.md, both parts): median and worst |error|. The
// terminal report says so where no measured step anchors the estimate.
inline constexpr double kUnprofiledMedianError = 0.042;
inline constexpr double kUnprofiledWorstError = 0.51;
// Rescales `ed` (the un-profiled edits: unprofiledEdits(&model)) in place.
ProfilerAnchor anchorProfilerCost(const ReplayModel& model, double measured_ns, ReplayEdits& ed);

// The DataLoader's worker pool. Its fetches waiting more than this share of the host's step mean the
// pool sets the step (a batch every traced step); below it, the waits are jitter.
inline constexpr double kLoaderLimitingShare = 0.05;

// Adds the edit of the fix with this id (diagnosis/fixes/registry.h) to `edits`. False when the fix
// is unknown or what it needs is missing; `basis` says how the edit was made.
bool fixEdit(std::string_view fix, const Ceilings* c, const RunAnalysis* run, ReplayEdits& edits, std::string& basis);

// The fix a finding advises, by its id ("" for none the replay can edit).
std::string_view fixOfFinding(std::string_view finding_id);

// The ranking's category a fix removes time from ("" for an unknown fix, or one that takes whatever
// limits the step).
std::string_view categoryOfFix(std::string_view fix);

// Two fixes whose predicted steps are within this share of each other are not ordered: each plan
// step lists the others so close (PlanStep::within_accuracy). On the validation set (testdata/whatif)
// a fix's predicted speedup was off by a median of 7.8 % from the measured one, and the
// same fix measured in two independent runs moved by a median of 12.9 %: a 10 % lead
// is inside both.
inline constexpr double kPlanTieShare = 0.10;
// A predicted saving may exceed its finding's bound by this share (rounding of the bound's inputs)
// before the prediction is refused.
inline constexpr double kBoundTolerance = 0.01;

// Replays the run unedited, un-profiled, and once per finding with an editable fix; fills
// d.what_if, each such finding's what_if, and d.plan. `c`: ceilings for the edits (null: unknown GPU).
// measured_step_ns > 0: the job's step timed without the profiler, which anchors the un-profiled
// step (anchorProfilerCost) in place of the estimate from the trace's host speed. `th`: the judgement
// thresholds (io_wait_max and the gain shares grade a loader finding the replay adds).
void predictFixes(const RunAnalysis& run, const Ceilings* c, Diagnosis& d, const Thresholds& th,
                  double measured_step_ns = 0);

// The traced steady-state step and the un-profiled estimate alone, without a fix's replay (two
// replays in place of one per fix): what `compare` needs of a run analyzed with --no-what-if.
StepWhatIf estimateStep(const RunAnalysis& run, double measured_step_ns = 0);

}  // namespace gpudoctor
