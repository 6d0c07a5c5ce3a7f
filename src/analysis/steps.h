// Step windows: the spans of a rank's timeline that the breakdown measures. Consecutive windows
// tile the timeline, so every nanosecond of GPU work is counted in exactly one step.
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
  int64_t begin_ns = 0;    // window on the timeline (see the README's definitions)
  int64_t end_ns = 0;
  int64_t cpu_begin_ns = 0;  // the host-side ProfilerStep range
  int64_t cpu_end_ns = 0;
  int64_t length() const { return end_ns - begin_ns; }
};

// Windows from ProfilerStep#N: step N runs from its host start to the next step's host start;
// the last one ends at the later of its host end and the end of the GPU work it launched. Without
// annotations, one window spans the first to the last GPU work. Error when selection keeps none.
Result<std::vector<StepWindow>> findSteps(const RankTrace& t, const TraceIndex& idx, const StepSelection& sel);

}  // namespace gpudoctor
