// Cross-rank analyses over rank digests (model/rank_digest.h), so that an N-rank run needs the
// digests in memory, not the traces:
//  - waiting per process group: the k-th collective of a group (its sequence number, not a
//    kernel name) is one operation on every member; a member's kernel lasts from its own arrival
//    to the last member's, so (own duration − the shortest) is time it waited, and the member with
//    the shortest kernel arrived last and caused that wait. Clock-free: no cross-host timestamps.
//  - own time per rank and step: the step's wall time minus the waiting it did in collectives,
//    what the rank would take if nobody held it up. A rank slow in most steps is a slow rank; one
//    rank slow in one step is an outlier (a GC pause, a long batch); every rank slow in one step
//    is a slow step.
//  - pipeline stages from the pipeline-parallel groups of the traces' pg_config: the GPU work per
//    step of each stage; the pipeline runs at its slowest stage's pace.
// Deterministic: the result depends on the digests' contents, not their order.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "model/rank_digest.h"

namespace gpudoctor {

struct FleetOptions {
  double straggler_steps_min = 0.6;   // a group's straggler causes most of its wait in at least this share of steps
  double straggler_wait_min = 0.05;   // ... and the others wait at least this share of their NCCL time
  double outlier_min = 0.05;          // a cell's own time exceeds its step's median by this share of the median step
  double slow_rank_steps_min = 0.5;   // a slow rank is an outlier in at least this share of its steps (and two)
  double slow_step_min = 0.10;        // a slow step's median wall exceeds the median step by this share
  double stage_imbalance_min = 0.05;  // the slowest stage's GPU work exceeds the median stage's by this share
};

struct FleetRank {
  int rank = -1;
  int64_t steps = 0;
  double wall_ns = 0;         // per step, mean
  double own_ns = 0;          // per step, mean: wall − waiting in collectives
  double wait_ns = 0;         // per step, mean
  int64_t nccl_ns = 0;        // its matched collectives' kernel time, all steps
  int64_t last_arrivals = 0;  // matched collectives it reached last (the others waited for it)
};

struct FleetGroup {
  std::string name, desc;
  int members = 0;            // ranks with collectives of the group
  int declared = 0;           // members pg_config lists (0: unknown)
  int64_t matched = 0;        // collectives seen on every member
  int64_t unmatched = 0;      // sequence numbers some member lacks (outside its steps)
  int straggler = -1;         // the rank holding the group back, or -1
  int top_cause = -1;         // the rank that caused most waiting (straggler or not)
  double cause_steps = 0;     // share of steps in which top_cause caused most of the waiting
  double wait_share = 0;      // share of the group's waiting top_cause caused
  double wait_fraction = 0;   // the members' waiting / their NCCL time
  double others_wait_ns = 0;  // per step, mean over the other members: what top_cause costs them
  std::string note;
};

struct SlowRank {
  int rank = -1;
  int64_t steps_flagged = 0, steps = 0;
  double excess_ns = 0;             // per step, mean own time over the median of its steps' medians
  std::string cause;                // the ranking category that grew most against its peers
  std::vector<std::string> groups;  // groups it is the straggler of
  double step_ns = 0;               // the run's mean step now
  double what_if_step_ns = 0;       // with this rank at its peers' median (the others stop waiting for it)
};

struct StepOutlier {
  int rank = -1;
  int64_t step = -1;     // ProfilerStep number (-1: the fallback window)
  double excess_ns = 0;  // own time over the step's median own time
  double median_ns = 0;  // the step's median own time over ranks
  std::string cause;
};

struct SlowStep {
  int64_t step = -1;
  double wall_ns = 0;    // median over ranks
  double excess_ns = 0;  // over the median step
};

struct FleetStage {
  int stage = 0;
  std::vector<int> ranks;
  double gpu_ns = 0;  // per step: median over its ranks of compute + exposed copies
};

struct StageReport {
  bool known = false;
  std::string basis;  // where the stages come from, or why unknown
  std::vector<FleetStage> stages;
  int slowest = -1;
  double imbalance = 0;  // slowest / median stage − 1
  double excess_ns = 0;  // per step: slowest − median stage
  bool flagged = false;
  std::string note;
};

struct FleetReport {
  int ranks = 0;                      // analyzed
  int world_size = -1;                // the largest world_size the traces declare
  int64_t rank_steps = 0;             // steps summed over ranks
  double step_ns = 0;                 // mean step wall over ranks and steps
  double median_step_ns = 0;          // median over steps of the median over ranks
  std::vector<FleetRank> rows;        // by rank
  std::vector<FleetGroup> groups;     // by name
  std::vector<SlowRank> slow_ranks;   // largest excess first
  std::vector<StepOutlier> outliers;  // largest excess first
  std::vector<SlowStep> slow_steps;   // by step
  StageReport stages;
  std::vector<TimeTotal> classes;                        // kernel classes over all ranks, largest first
  std::vector<std::pair<std::string, std::string>> job;  // each field's value on most ranks (differences in notes)
  std::vector<std::string> left_out;                     // "rank 3 (path): reason"
  std::vector<std::string> notes;
};

// Errors when no digest has steps, or two digests claim one rank.
Result<FleetReport> analyzeFleet(const std::vector<RankDigest>& digests, const FleetOptions& opt = {});

// Ranks [0, world_size) with no digest, in order; empty when world_size is unknown.
std::vector<int> missingRanks(const std::vector<RankDigest>& digests);

}  // namespace gpudoctor
