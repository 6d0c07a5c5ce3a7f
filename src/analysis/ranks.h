// Cross-rank view: per-rank step time, compute and communication, and the straggler. A rank that
// arrives late at a collective makes every other rank wait inside the NCCL kernel, so its own
// NCCL kernels are the shortest: the k-th collective of each rank is matched across ranks and
// the excess over the shortest is the time spent waiting for someone else.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/breakdown.h"

namespace gpudoctor {

struct RankWait {
  int rank = -1;
  int64_t nccl_ns = 0;        // summed NCCL kernel time of the matched collectives
  int64_t wait_ns = 0;        // Σ (own duration − shortest duration among ranks)
  int64_t last_arrivals = 0;  // collectives where this rank's kernel was the shortest and another rank waited
};

struct StragglerReport {
  bool matched = false;     // false: ranks recorded different numbers of NCCL kernels
  std::string note;         // why not matched, or the verdict in words
  int64_t collectives = 0;  // matched collectives
  std::vector<RankWait> ranks;
  int straggler = -1;  // rank, or -1 when none is consistent
  double straggler_share =
      0;  // share of the collectives with waiting where that rank arrived last (share_of says of what)
  std::string share_of = "collectives";  // "steps" when judged per process group (analysis/fleet)
  int64_t others_wait_ns = 0;            // mean over the other ranks of their wait_ns
};

// Thresholds: a straggler arrives last in at least `min_share` of the collectives and costs the
// others at least `min_wait_fraction` of their NCCL time.
StragglerReport findStraggler(const std::vector<RankWindows>& ranks, const std::vector<int>& rank_ids,
                              double min_share = 0.6, double min_wait_fraction = 0.05);

}  // namespace gpudoctor
