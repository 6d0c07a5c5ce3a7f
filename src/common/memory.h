// Memory hints for the few large arrays (events, per-trace indices): transparent huge pages cut
// the page faults of first touch by 512x where the kernel has THP in "madvise" mode.
#pragma once
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpudoctor {

// Asks for huge pages over the whole 2 MiB pages inside [p, p + bytes); a no-op where unsupported.
inline void adviseHugePages(const void* p, size_t bytes) {
#ifdef MADV_HUGEPAGE
  constexpr uintptr_t kHuge = 2u << 20;
  auto b = (reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  auto e = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(kHuge - 1);
  if (e > b) ::madvise(reinterpret_cast<void*>(b), e - b, MADV_HUGEPAGE);
#endif
}

// Reserves capacity for n elements and advises huge pages over it.
template <class T>
void reserveHuge(std::vector<T>& v, size_t n) {
  v.reserve(n);
  if (v.capacity() * sizeof(T) >= (4u << 20)) adviseHugePages(v.data(), v.capacity() * sizeof(T));
}

}  // namespace gpudoctor
