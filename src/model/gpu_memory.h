// The CUDA caching allocator's allocated bytes over time, from the profiler's [memory] events
// (torch.profiler profile_memory=True), for the HTML report's memory view. Bounded: a gigabyte trace
// holds millions of such events, and a rank keeps at most kMaxSamples of them (~0.5 MB), merged so
// that every peak survives.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpudoctor {

struct GpuMemorySample {
  int64_t t_ns = 0;             // on the rank's absolute clock once finish() ran
  int64_t allocated_bytes = 0;  // the device's total allocated after the event ("Total Allocated")
};

class GpuMemoryTrack {
 public:
  static constexpr size_t kMaxSamples = size_t{1} << 15;
  // One event of `device`, in any order (readers see events unsorted). Only the first device seen
  // is kept: a process that allocates on two devices has two curves, and the report draws one.
  void add(int64_t t_ns, int64_t allocated_bytes, int64_t device);
  // Sorts by time, adds `base_ns` (the trace's base time) and bounds the count.
  void finish(int64_t base_ns);
  // The samples by time (after finish).
  const std::vector<GpuMemorySample>& samples() const { return samples_; }
  bool empty() const { return samples_.empty(); }
  // The device the samples are of (-1: none).
  int64_t device() const { return device_; }

 private:
  // Sorts and merges neighbours pairwise, keeping the larger of each pair: half the samples, the
  // same peaks.
  void halve();
  std::vector<GpuMemorySample> samples_;
  int64_t device_ = -1;
};

}  // namespace gpudoctor
