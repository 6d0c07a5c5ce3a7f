// The walk over one rank's host events (internal to analysis/job_profile*.cc): backward passes and
// their recomputation, optimizer steps and what runs in them, DataLoader fetches, GEMM operators and
// autocast, CUDA graph launches and the host syncs, counted in the step windows; where activation
// checkpointing spends host time and where autocast would cast.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/job_profile.h"

namespace gpudoctor::job_profile_detail {

// One synchronizing operator's tally.
struct SyncAcc {
  int64_t count = 0, host_ns = 0, wait_ns = 0;
};
// The synchronizing operator, the blocking call, its caller and the copy it waited for (HostSync's fields).
using SyncKey = std::tuple<std::string, std::string, std::string, std::string>;

// What the walk counts, in the step windows unless said.
struct HostCounts {
  uint32_t seen = 0;  // union of the NameFlag bits of every event's name (GPU events too, whole trace)
  int64_t backward_passes = 0, optimizer_steps = 0, recompute_nodes = 0, recompute_gpu_ns = 0, forward_gpu_ns = 0;
  int64_t accumulate_grads = 0;  // AccumulateGrad nodes in the steps
  int64_t checkpoint_entries = 0;
  int64_t optimizer_launches = 0, fused_ops = 0, foreach_ops = 0, loop_ops = 0;
  int64_t gemm_ops = 0, autocast_hits = 0, loaders = 0, loaders_in_process = 0, graph_launches = 0;
  int64_t graph_launches_all = 0;               // in the whole trace
  int64_t sdpa_calls = 0, sdpa_math_calls = 0;  // in the steps, each call once (not autocast's re-dispatch)
  std::map<std::string, int64_t> optimizer_names;
  std::map<SyncKey, SyncAcc> syncs;
};

// Walks the host events of an analyzed rank once, in start order. `flags` holds nameFlags of each
// of the trace's interned strings. `checkpoint` and `casts`, when given, are filled as profileRank
// describes (job_profile.h).
HostCounts walkHostEvents(const RankAnalysis& ra, const std::vector<uint32_t>& flags, CheckpointRegions* checkpoint,
                          std::vector<CastSite>* casts);

}  // namespace gpudoctor::job_profile_detail
