// Step windows: the spans of a rank's timeline that the breakdown measures. Consecutive windows
// tile the timeline, so every nanosecond of GPU work is counted in exactly one step, except across
// a gap in the recording (a sampled `record`): there a run of steps ends and the gap is in none.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "model/trace.h"

namespace gpudoctor {

struct TraceIndex;

// Which steps to keep: empty means all; otherwise step numbers (the N of ProfilerStep#N).
struct StepSelection {
  std::vector<int64_t> numbers;
  // Parses "3", "2-4", "2,5,7-9"; Error on anything else.
  static Result<StepSelection> parse(const std::string& text);
  bool keeps(int64_t n) const;
};

struct StepWindow {
  int64_t number = -1;     // N of ProfilerStep#N; -1 for the fallback window
  bool annotated = false;  // false: no ProfilerStep annotations, the window is the GPU-active span
  int64_t begin_ns = 0;    // window on the timeline (see docs/reference/analyze.md, Definitions)
  int64_t end_ns = 0;
  int64_t cpu_begin_ns = 0;  // the host-side ProfilerStep range
  int64_t cpu_end_ns = 0;
  int64_t clipped_ns = 0;  // host range cut off because it outlived everything the profiler recorded
  int64_t length() const { return end_ns - begin_ns; }
};

// What of the trace the annotated steps leave out (all steps, before --steps selects).
struct StepCoverage {
  int64_t gpu_outside_ns = 0;  // summed duration of GPU work starting before the first or after the last step
  int64_t gpu_outside_ops = 0;
  int64_t gpu_before_ns = 0;  // of which before the first step
  // First or last steps that launch and run no GPU work while others do (the step the last
  // prof.step() opens, holding only what runs after training): left out of the windows.
  struct Dropped {
    int64_t number = -1;
    int64_t host_ns = 0;
  };
  std::vector<Dropped> dropped;
};

// Windows from ProfilerStep#N: step N runs from its host start to the next step's host start,
// unless that start comes more than step N's host length after its host end (a gap: step N
// then ends as a last step does); the last one ends at the later of its host end and the end of the GPU work it
// launched. Without annotations, one window spans the first to the last GPU work. A last step whose host range ends
// after the last recorded event and Kineto's "Record Window End" is clipped there (clipped_ns says
// how much). A first or last step with no GPU work (launched or running) is left out while another
// step has some (StepCoverage::dropped). Error when selection keeps none. `cov`, when given, receives what lies outside
// the steps.
Result<std::vector<StepWindow>> findSteps(const RankTrace& t, const TraceIndex& idx, const StepSelection& sel,
                                          StepCoverage* cov = nullptr);

}  // namespace gpudoctor
