// The ranks of a many-rank job worth reading in full after the streaming pass (analysis/fleet):
// the slowest rank (the largest mean step), the median rank, and the straggler the cross-rank
// analyses name (else their first slow rank). Their traces, diagnosed as one small run, give the
// job's findings and plan while memory holds these few traces at most.
#pragma once
#include <string>
#include <vector>

#include "analysis/fleet.h"
#include "model/rank_digest.h"

namespace gpudoctor {

// At most this many ranks are picked (and so read in full at once).
inline constexpr size_t kFocusRanksMax = 3;

struct FocusRank {
  int rank = -1;
  std::string path;                  // the trace its digest came from (for a summary: the path it names)
  std::vector<std::string> reasons;  // "slowest", "median", "straggler", "slow_rank"
  std::vector<std::string> why;      // each reason in words, with its figure
  bool analyzed = false;             // its trace was read in full and diagnosed (set by the caller)
};

// The ranks in the order slowest, median, straggler; a rank picked twice is listed once with both
// reasons. Ranks without steps (left out) are never picked. Empty when no rank has steps.
std::vector<FocusRank> pickFocusRanks(const FleetReport& f, const std::vector<RankDigest>& digests);

}  // namespace gpudoctor
