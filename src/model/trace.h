// The model: plain data that every source fills and every analysis reads. One RankTrace per
// profiler trace file (one process, normally one rank). Times are integer nanoseconds on the
// rank's absolute clock (baseTimeNanoseconds + ts), so ranks of one host line up.
#pragma once
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/gpu_memory.h"

namespace gpudoctor {

// Interns strings so events hold 32-bit ids; one pool per rank, so parsing needs no locks.
class StringPool {
 public:
  StringPool();
  // Move-only: the index views the pool's own strings.
  StringPool(const StringPool&) = delete;
  StringPool& operator=(const StringPool&) = delete;
  StringPool(StringPool&&) = default;
  StringPool& operator=(StringPool&&) = default;
  // Returns the id of s, adding it if new.
  uint32_t intern(std::string_view s);
  // The text of an id.
  std::string_view view(uint32_t id) const { return strings_[id]; }
  // Number of distinct strings.
  size_t size() const { return strings_.size(); }
  // Id of the empty string.
  static constexpr uint32_t kEmpty = 0;

 private:
  std::deque<std::string> strings_;  // a deque never moves its elements, so views stay valid
  std::unordered_map<std::string_view, uint32_t> index_;
};

// What an event is, in the model's own terms. Each reader maps its format here; the comment says
// which Kineto category (and, for a future CUPTI reader, which CUPTI activity record) maps to it.
enum class EventKind : uint8_t {
  kHostOp,        // Kineto cpu_op (PyTorch <= 1.9: Operator): a framework operator on a host thread; CUPTI: none
  kRange,         // Kineto user_annotation (record_function ranges); CUPTI: NVTX push/pop (CUPTI_ACTIVITY_KIND_MARKER)
  kGpuRange,      // Kineto gpu_user_annotation: a host range projected on a GPU stream; CUPTI: none
  kRuntimeCall,   // Kineto cuda_runtime (older: Runtime): cudaLaunchKernel, ...; CUPTI_ACTIVITY_KIND_RUNTIME
  kDriverCall,    // Kineto cuda_driver: cuLaunchKernelEx, ...; CUPTI_ACTIVITY_KIND_DRIVER
  kSyncEvent,     // Kineto cuda_sync: stream/event/context sync, stream wait; CUPTI_ACTIVITY_KIND_SYNCHRONIZATION
  kKernel,        // Kineto kernel (older: Kernel); CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
  kMemcpy,        // Kineto gpu_memcpy (older: Memcpy); CUPTI_ACTIVITY_KIND_MEMCPY (and MEMCPY2)
  kMemset,        // Kineto gpu_memset (older: Memset); CUPTI_ACTIVITY_KIND_MEMSET
  kHostFunction,  // Kineto python_function (with_stack); CUPTI: none
  kProfilerOverhead,  // Kineto overhead: the profiler's own buffers; CUPTI_ACTIVITY_KIND_OVERHEAD
  kOther,             // any other complete event (other Chrome-trace producers)
};
constexpr int kEventKindCount = 12;
// Short stable name of a kind, as used in JSON output (Kineto's category names, kept for compatibility).
std::string_view eventKindName(EventKind k);
// True for work that occupies a GPU (kernels, memcpy, memset).
inline bool isGpuWork(EventKind k) {
  return k == EventKind::kKernel || k == EventKind::kMemcpy || k == EventKind::kMemset;
}

// A timeline: a host thread (pid, tid) or a GPU stream (device, stream).
struct Track {
  bool gpu = false;
  int64_t pid = 0;     // host process id, or device index for GPU tracks
  int64_t tid = 0;     // host thread id, or stream id for GPU tracks
  uint32_t name = 0;   // raw pid/tid text where they were not numbers
  uint32_t label = 0;  // thread_name metadata where present
};

// What an event does for the job, set by the reader that knows its format's names (Kineto:
// sources/kineto/roles.cc), so that analysis never matches framework names. Bits of Event::roles.
enum EventRole : uint16_t {
  kRoleStep = 1u << 0,  // host range of one training step (Kineto: ProfilerStep#N); number: RankTrace::stepNumber
  kRoleDataLoading = 1u << 1,      // host range fetching the next batch (Kineto: enumerate(DataLoader)#...)
  kRoleLoaderInProcess = 1u << 2,  // with kRoleDataLoading: the fetch runs on the training process itself
                                   // (Kineto: _SingleProcessDataLoaderIter, i.e. num_workers=0)
  kRoleOptimizerStep = 1u << 3,    // host range of an optimizer step (Kineto: Optimizer.step#...)
  kRoleSyncCall = 1u << 4,    // host call that blocks until the GPU catches up (cudaStreamSynchronize, cudaMemcpy, ...)
  kRoleCollective = 1u << 5,  // GPU work that is communication (NCCL kernels, model/comm_kernels.h)
  kRoleGraphLaunch =
      1u << 6,  // host call that replays a CUDA graph (cudaGraphLaunch; its kernels share its correlation)
  kRoleEventRecord = 1u << 7,  // host call that records an event on a stream (cudaEventRecord)
  kRoleStreamWait = 1u << 8,   // host call that makes a stream wait for an event (cudaStreamWaitEvent)
};

// One interval on a track. Only complete ('X') events and matched 'B'/'E' pairs become Events.
struct Event {
  int64_t start_ns = 0;
  int64_t dur_ns = 0;
  int64_t correlation = -1;  // links a launch call to the GPU work it queued
  int64_t external_id = -1;  // links GPU work and launches to the cpu_op that issued them
  int64_t bytes = 0;         // memcpy/memset bytes; NCCL kernels: message bytes (see Collective)
  uint32_t name = 0;         // interned
  uint32_t track = 0;        // index into RankTrace::tracks
  uint32_t collective = 0;   // kernels: 1 + index into RankTrace::collectives for NCCL kernels, else 0
  uint32_t dtype = 0;        // host ops, "nccl:" ranges: interned type of the first typed input ("float"), or 0
  uint32_t shapes = 0;       // host ops, "nccl:" ranges: interned input shapes, compact ("64x512,512x2048,-"), or 0
  EventKind kind = EventKind::kOther;
  uint16_t roles = 0;  // EventRole bits
  int64_t end_ns() const { return start_ns + dur_ns; }
  // True when the reader gave the event role r.
  bool hasRole(EventRole r) const { return (roles & r) != 0; }
};
// Events are the bulk of a rank's memory (tens of millions in a gigabyte trace): keep them to one cache line.
static_assert(sizeof(Event) == 64, "Event must stay 64 bytes");

// Arguments PyTorch attaches to NCCL kernels (record_shapes not required).
struct Collective {
  uint32_t coll_name = 0;  // "allreduce", "allgather", ...
  uint32_t dtype = 0;      // "Float", "BFloat16", ...
  int64_t in_nelems = -1;
  int64_t out_nelems = -1;
  int32_t group_size = -1;
  uint32_t pg_ranks = 0;  // "[0, 1]"
  uint32_t pg_name = 0;
  // The process group, for joining ranks: interned; the group's name where the trace has one
  // (the same on every member rank), else its rank list; 0 when neither is known.
  uint32_t process_group = 0;
  // The k-th collective (from 0) of process_group on this rank, counted by the reader in GPU
  // start order: collectives with equal (process_group, seq) on different ranks are one operation.
  int64_t seq = -1;
};

// A process group as distributedInfo.pg_config lists it (every group the job created).
struct ProcessGroupInfo {
  std::string name;        // "0", "1", ... (the collectives' "Process Group Name")
  std::string desc;        // "default_pg", "DATA_PARALLEL_GROUP", ...
  std::vector<int> ranks;  // global ranks, in the group's order
};

// The GPU's properties as the trace records them (deviceProperties).
struct DeviceProps {
  int64_t id = -1;
  std::string name;
  int64_t total_global_mem = 0;
  int64_t num_sms = 0;
  int compute_major = 0;
  int compute_minor = 0;
};

// Counts from reading, for the JSON report and the benchmark.
struct ReadStats {
  uint64_t input_bytes = 0;      // bytes of JSON (after decompression)
  uint64_t file_bytes = 0;       // bytes on disk
  uint64_t json_events = 0;      // elements of traceEvents
  uint64_t kept_events = 0;      // became Events
  uint64_t flow_events = 0;      // 's'/'f'/'t' (correlation is taken from args instead)
  uint64_t metadata_events = 0;  // 'M'
  uint64_t instant_events = 0;   // 'i'/'I', counters 'C' and others without a duration
  uint64_t unmatched_begin_end = 0;
  double parse_seconds = 0;
};

// A step event and its number (Kineto: the N of ProfilerStep#N).
struct StepMark {
  uint32_t event = 0;  // index into RankTrace::events
  int64_t number = -1;
};

// Everything read from one trace file.
struct RankTrace {
  std::string path;
  int rank = -1;  // from distributedInfo; -1 when absent (file order is used then)
  int world_size = -1;
  std::string backend;
  std::string nccl_version;
  int64_t base_time_ns = 0;  // baseTimeNanoseconds (0 for older absolute-µs traces)
  bool has_base_time = false;
  int schema_version = -1;
  std::vector<DeviceProps> devices;
  std::vector<ProcessGroupInfo> process_groups;  // distributedInfo.pg_config; empty when absent
  StringPool strings;
  std::vector<Track> tracks;
  std::vector<Event> events;  // sorted by (start_ns, longer first)
  std::vector<Collective> collectives;
  // The step number of each kRoleStep event, as the reader read it (-1 where it has none), in
  // event order. Look it up with stepNumber().
  std::vector<StepMark> step_marks;
  int64_t peak_allocated_bytes = -1;  // largest CUDA-device total from [memory] events (profile_memory=True), else -1
  int64_t peak_device = -1;           // the device it was on
  GpuMemoryTrack gpu_memory;          // CUDA-device allocated bytes over time, from the same events
  int64_t record_window_end_ns = INT64_MIN;  // Kineto's "Record Window End" instant; INT64_MIN when absent
  // The accelerator stack, from device and runtime names: "cuda", "rocm" (HIP runtime calls, AMD
  // devices), "mtia"; empty when the trace does not say.
  std::string platform;
  ReadStats stats;
  // The step number the reader gave event i (-1 when it has none).
  int64_t stepNumber(uint32_t i) const;
};

}  // namespace gpudoctor
