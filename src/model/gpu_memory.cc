#include "model/gpu_memory.h"

#include <algorithm>

namespace gpudoctor {

void GpuMemoryTrack::add(int64_t t_ns, int64_t allocated_bytes, int64_t device) {
  if (device_ == -1 && samples_.empty()) device_ = device;
  if (device != device_) return;
  if (samples_.size() >= 2 * kMaxSamples) halve();
  samples_.push_back({t_ns, allocated_bytes});
}

void GpuMemoryTrack::halve() {
  std::stable_sort(samples_.begin(), samples_.end(), [](const auto& a, const auto& b) { return a.t_ns < b.t_ns; });
  size_t out = 0;
  for (size_t i = 0; i < samples_.size(); i += 2) {
    const GpuMemorySample& a = samples_[i];
    samples_[out++] =
        (i + 1 < samples_.size() && samples_[i + 1].allocated_bytes > a.allocated_bytes) ? samples_[i + 1] : a;
  }
  samples_.resize(out);
}

void GpuMemoryTrack::finish(int64_t base_ns) {
  while (samples_.size() > kMaxSamples) halve();
  std::stable_sort(samples_.begin(), samples_.end(), [](const auto& a, const auto& b) { return a.t_ns < b.t_ns; });
  for (auto& s : samples_) s.t_ns += base_ns;
}

}  // namespace gpudoctor
