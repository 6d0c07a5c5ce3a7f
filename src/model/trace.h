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

// What an event is, from its Kineto category.
enum class EventKind : uint8_t {
  kCpuOp,              // cat cpu_op: an aten operator on a host thread
  kUserAnnotation,     // cat user_annotation: record_function ranges (ProfilerStep#N, DataLoader, ...)
  kGpuUserAnnotation,  // cat gpu_user_annotation: the same ranges projected on a GPU stream
  kCudaRuntime,        // cat cuda_runtime: cudaLaunchKernel, cudaMemcpyAsync, ...
  kCudaDriver,         // cat cuda_driver: cuLaunchKernelEx, ...
  kCudaSync,           // cat cuda_sync: Stream/Event/Context Sync, Stream Wait Event
  kKernel,             // cat kernel
  kMemcpy,             // cat gpu_memcpy
  kMemset,             // cat gpu_memset
  kPythonFunction,     // cat python_function (with_stack)
  kOverhead,           // cat overhead: the profiler's own activity buffers
  kOther,              // any other complete event (other Chrome-trace producers)
};
constexpr int kEventKindCount = 12;
// Short stable name of a kind, as used in JSON output.
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

// One interval on a track. Only complete ('X') events and matched 'B'/'E' pairs become Events.
struct Event {
  int64_t start_ns = 0;
  int64_t dur_ns = 0;
  int64_t correlation = -1;  // links a launch call to the GPU work it queued
  int64_t external_id = -1;  // links GPU work and launches to the cpu_op that issued them
  int64_t bytes = 0;         // memcpy/memset bytes; NCCL kernels: message bytes (see Collective)
  uint32_t name = 0;         // interned
  uint32_t track = 0;        // index into RankTrace::tracks
  // Kernels: 1 + index into RankTrace::collectives for NCCL kernels, else 0.
  // cpu_op: interned dtype of the first typed input ("c10::BFloat16", "float"), else 0.
  uint32_t aux = 0;
  EventKind kind = EventKind::kOther;
  int64_t end_ns() const { return start_ns + dur_ns; }
};

// Arguments PyTorch attaches to NCCL kernels (record_shapes not required).
struct Collective {
  uint32_t coll_name = 0;  // "allreduce", "allgather", ...
  uint32_t dtype = 0;      // "Float", "BFloat16", ...
  int64_t in_nelems = -1;
  int64_t out_nelems = -1;
  int32_t group_size = -1;
  uint32_t pg_ranks = 0;   // "[0, 1]"
  uint32_t pg_name = 0;
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
  uint64_t input_bytes = 0;     // bytes of JSON (after decompression)
  uint64_t file_bytes = 0;      // bytes on disk
  uint64_t json_events = 0;     // elements of traceEvents
  uint64_t kept_events = 0;     // became Events
  uint64_t flow_events = 0;     // 's'/'f'/'t' (correlation is taken from args instead)
  uint64_t metadata_events = 0; // 'M'
  uint64_t instant_events = 0;  // 'i'/'I', counters 'C' and others without a duration
  uint64_t unmatched_begin_end = 0;
  double parse_seconds = 0;
};

// Everything read from one trace file.
struct RankTrace {
  std::string path;
  int rank = -1;        // from distributedInfo; -1 when absent (file order is used then)
  int world_size = -1;
  std::string backend;
  std::string nccl_version;
  int64_t base_time_ns = 0;   // baseTimeNanoseconds (0 for older absolute-µs traces)
  bool has_base_time = false;
  int schema_version = -1;
  std::vector<DeviceProps> devices;
  StringPool strings;
  std::vector<Track> tracks;
  std::vector<Event> events;  // sorted by (start_ns, longer first)
  std::vector<Collective> collectives;
  int64_t peak_allocated_bytes = -1;  // largest CUDA-device total from [memory] events (profile_memory=True), else -1
  int64_t peak_device = -1;           // the device it was on
  ReadStats stats;
};

}  // namespace gpudoctor
