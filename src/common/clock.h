// The monotonic clock in nanoseconds (CLOCK_MONOTONIC): the time base of the monitor's rates (host
// counters, NVML counters) and of its recording's sync interval.
#pragma once
#include <time.h>

#include <cstdint>

namespace gpudoctor {

inline int64_t monotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

}  // namespace gpudoctor
