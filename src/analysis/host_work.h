// The host's own work: stretches of a host thread's time in which it runs no framework operator and
// no CUDA call (Python building or tokenizing a batch, metrics, logging, checkpoint bookkeeping).
// Launch overhead is the cost of each launch, microseconds between operators; a long stretch that
// launches nothing is work of the job's own, and its fix is to move it (DataLoader workers, log
// every N steps, asynchronous checkpoints), not to launch less.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "analysis/steps.h"
#include "model/trace.h"

namespace gpudoctor {

// A stretch shorter than this is dispatch between operators (Python runs 5-50 us between two
// operators of a training step), not work of the host's own.
inline constexpr int64_t kHostWorkMinNs = 200'000;

struct HostWork {
  // Per track (index into RankTrace::tracks; all on the thread of the step annotations): the
  // stretches in which no host thread of the rank runs an operator, a call or a fetch, sorted and
  // disjoint, inside the step windows and not across a step's start (the profiler's own step).
  std::vector<std::vector<std::pair<int64_t, int64_t>>> stretches;
  int64_t total_ns = 0;    // their time over the selected steps
  double per_step_ns = 0;  // ... per step (median over steps)
};

// Of one rank's trace, over its step windows.
HostWork hostOwnWork(const RankTrace& t, const std::vector<StepWindow>& windows);

}  // namespace gpudoctor
