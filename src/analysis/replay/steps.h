// Step windows in the replay (internal to analysis/replay/): where a host time lands, each window's
// GPU side, and the steady-state step from the windows' rows (analysis/steady_state.h).
#pragma once
#include <array>
#include <span>
#include <vector>

#include "analysis/replay/graph.h"

namespace gpudoctor::replay_detail {

// Where a host time on a thread lands in the replay: shifted with the call before it (gaps keep
// their length). The node it follows (-1: none, the time itself) and the host time after it.
struct HostPoint {
  int64_t value;
  int64_t node;
  int64_t after;  // host time after the node's value
};

HostPoint mapHost(const RankGraph& g, const std::vector<int64_t>& value, uint32_t track, int64_t t,
                  const ReplayEdits& ed);

// The GPU side of each step window: the work launched from the step's host range (to the next
// step's start; the last step, or one a gap follows, to its own end; an unannotated window: all of
// it), traced (side 0) and replayed (side 1).
struct GpuStep {
  struct Side {
    int64_t end_ns = kUnset;  // the last end of that work
    // The GPU's own time for that work on its busiest stream: the work and the gaps before it that the
    // GPU, not the host, made (the work was launched already), collectives left out.
    int64_t queued_ns = 0;
    int64_t busy_ns = 0;                  // the busiest stream's work, collectives left out
    std::array<int64_t, 3> busy_parts{};  // ... as compute, communication (0), copies
  };
  std::array<Side, 2> side;
};

std::vector<GpuStep> gpuSteps(const RankGraph& g, const std::vector<int64_t>& value,
                              std::span<const StepWindow> windows);

// The k-th step of every rank: sums over ranks of its timing and of its host critical path.
struct StepRow {
  double ranks = 0;
  StepTiming traced, replayed;
  std::array<double, kPathCategoryCount> path{};
};

// The steps' means over ranks, the steady-state step traced and replayed, and what makes up the
// replayed one: the host's critical path where the host sets it (the middle steps by host time),
// else the busiest stream's work by kind and its idle gaps.
void finishSteps(std::vector<StepRow>& rows, const ReplayEdits& ed, Replay& out);

}  // namespace gpudoctor::replay_detail
