// The time breakdown of one step on one rank: where the window's nanoseconds went on the GPU
// (compute, communication overlapped or exposed, copies, idle and why), and what the host did
// (data loading, optimizer, blocking syncs, launch latency). Definitions: docs/reference/analyze.md.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "analysis/steps.h"
#include "analysis/trace_index.h"

namespace gpudoctor {

// Count, bytes and time of one kind of copy.
struct CopyStats {
  int64_t count = 0;
  int64_t bytes = 0;
  int64_t dur_ns = 0;  // sum of durations (clipped to the window)
};

// Copy directions as Kineto names them.
enum class CopyDir : uint8_t { kHtoD, kDtoH, kDtoD, kPtoP, kHtoH, kMemset, kOther };
constexpr int kCopyDirCount = 7;
std::string_view copyDirName(CopyDir d);
// The direction of a copy from its name ("Memcpy HtoD (Pinned -> Device)": CUPTI's memcpy kind as
// Kineto names it); and whether its host side is pageable memory.
CopyDir copyDirOf(std::string_view name);
bool isPageableCopy(std::string_view name);

// Summary of a sample of durations, in nanoseconds.
struct DurationStats {
  int64_t count = 0;
  int64_t total_ns = 0;
  int64_t min_ns = 0, p50_ns = 0, p95_ns = 0, max_ns = 0;
  double mean_ns = 0;
  // Fills from values (sorted in place).
  static DurationStats of(std::vector<int64_t>& v);
};

struct StepBreakdown {
  StepWindow window;
  // GPU side: lengths of exact interval sets inside the window.
  int64_t wall_ns = 0;
  int64_t gpu_busy_ns = 0;      // union of all GPU work on all streams
  int64_t compute_ns = 0;       // union of non-NCCL kernels
  int64_t comm_ns = 0;          // union of NCCL kernels
  int64_t comm_overlap_ns = 0;  // NCCL ∩ compute
  int64_t comm_exposed_ns = 0;  // NCCL − compute
  int64_t memcpy_ns = 0;        // union of memcpy
  int64_t memset_ns = 0;        // union of memset
  int64_t copy_exposed_ns = 0;  // memcpy/memset while no kernel runs
  int64_t idle_ns = 0;          // wall − busy
  // Idle split by cause (sums to idle_ns).
  int64_t idle_host_ns = 0;            // next work not yet launched by the host
  int64_t idle_sync_ns = 0;            // ... because the launching thread was blocked in a sync call
  int64_t idle_dependency_ns = 0;      // next work already queued: waiting on another stream or event
  int64_t idle_other_ns = 0;           // nothing more ran in the window, or no launch record
  int64_t idle_in_loader_ns = 0;       // idle time while the host was inside DataLoader __next__
  int64_t idle_host_in_loader_ns = 0;  // ... the part of it classified host
  int64_t idle_sync_in_loader_ns = 0;  // ... the part of it classified sync
  int64_t gpu_wait_ns = 0;             // Stream Wait Event time on GPU streams (cuda_sync events), if recorded
  std::array<CopyStats, kCopyDirCount> copies{};
  CopyStats pageable_htod, pinned_htod, pageable_dtoh, pinned_dtoh;
  int64_t kernels = 0;  // kernels starting in the window
  // Host side.
  int64_t dataloader_ns = 0;     // DataLoader __next__ ranges
  int64_t optimizer_ns = 0;      // Optimizer.step# ranges
  int64_t sync_ns = 0;           // blocking synchronization calls
  DurationStats launch_latency;  // launch call end -> GPU start, for work launched in the window
};

// Measures one window. Appends the window's launch latencies to `latencies` when given.
StepBreakdown measureStep(const TraceIndex& idx, const StepWindow& w, std::vector<int64_t>* latencies = nullptr);

// Adds the additive fields of `b` into `sum` (launch latency is not additive: set it separately).
void accumulate(StepBreakdown& sum, const StepBreakdown& b);

// One rank's index with the windows selected on it; the unit that cross-rank summaries take.
struct RankWindows {
  const TraceIndex* idx = nullptr;
  const std::vector<StepWindow>* windows = nullptr;
};

}  // namespace gpudoctor
