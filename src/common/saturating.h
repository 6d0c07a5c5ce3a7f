// Sums of figures a trace states (byte counts a Kineto "bytes" arg can set to anything): added
// without signed overflow, saturating at the int64 limits.
#pragma once
#include <cstdint>

namespace gpudoctor {

inline void addSaturating(int64_t& sum, int64_t v) {
  if (__builtin_add_overflow(sum, v, &sum)) sum = v > 0 ? INT64_MAX : INT64_MIN;
}

}  // namespace gpudoctor
