// Lookups over one RankTrace that every analysis needs, built once: GPU work in start order, the
// launch call of each piece of GPU work (by correlation id), the operator that issued it (by
// External id), and the time sets (compute, NCCL, copies, host syncs) as exact interval sets.
// What events do (steps, loader, optimizer, syncs) comes from their reader-set roles, never names.
#pragma once
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "analysis/id_map.h"
#include "analysis/intervals.h"
#include "analysis/kernel_class.h"
#include "model/trace.h"

namespace gpudoctor {

struct TraceIndex {
  const RankTrace* trace = nullptr;
  std::vector<uint32_t> gpu_work;           // kernels, memcpy, memset; by start
  std::vector<int64_t> gpu_work_max_end;    // prefix maximum of end over gpu_work
  std::vector<uint32_t> launches;           // runtime/driver calls with a correlation
  IdMap work_of;                            // correlation -> GPU work event
  IdMap launch_of;                          // correlation -> launch event
  IdMap op_of;                              // External id -> cpu_op event
  std::vector<KernelClass> class_of_event;  // per event (kernels only meaningful)
  std::vector<uint32_t> step_annotations;   // host step ranges (kRoleStep; Kineto: ProfilerStep#N)
  IntervalSet all_gpu, compute, nccl, memcpy, memset, mem, kernels, comm_overlap;
  IntervalSet dataloader, optimizer, host_sync, gpu_wait;  // kRoleDataLoading, kRoleOptimizerStep, kRoleSyncCall
  // Loader ranges run on the training process itself (kRoleLoaderInProcess; Kineto:
  // _SingleProcessDataLoaderIter, i.e. DataLoader(num_workers=0)): 0 when the loader has workers.
  uint32_t loader_in_process = 0;
  std::unordered_map<uint32_t, IntervalSet> sync_by_track;  // host sync per thread (idle attribution)
  bool has_gpu_work() const { return !gpu_work.empty(); }
  // First position in `list` (gpu_work or launches, both in start order) whose event starts at or
  // after t.
  std::vector<uint32_t>::const_iterator firstStartingAt(const std::vector<uint32_t>& list, int64_t t) const;
};

// Builds the index (one pass over the events plus sorting of the sets).
TraceIndex buildIndex(const RankTrace& t);

}  // namespace gpudoctor
