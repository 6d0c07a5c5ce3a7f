// Shared pieces of the GPU benchmarks: CUDA errors as values, device buffers, fresh random inputs
// (the same splitmix hash as common/numeric_check, so the host can regenerate them), poisoned
// outputs and a count of what stayed poisoned, and event timing (median after warm-up).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/numeric_check.h"
#include "common/result.h"

namespace gpudoctor::gpubench {

// An Error naming the CUDA call when err is not cudaSuccess.
Status cudaCheck(cudaError_t err, const char* what);
#define GPUB_TRY(expr)                                     \
  do {                                                     \
    ::gpudoctor::Status s_ = (expr);                       \
    if (!s_.ok()) return ::gpudoctor::Error{s_.message()}; \
  } while (0)
#define GPUB_CUDA(call) GPUB_TRY(::gpudoctor::gpubench::cudaCheck((call), #call))

// Device memory freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(o.p_), bytes_(o.bytes_) {
    o.p_ = nullptr;
    o.bytes_ = 0;
  }
  ~DeviceBuffer();
  // Allocates bytes (an Error names the size when the GPU is out of memory).
  Status alloc(size_t bytes);
  // The pointer, typed.
  template <class T = void>
  T* get() const {
    return static_cast<T*>(p_);
  }
  // Allocated size.
  size_t bytes() const { return bytes_; }
  // Frees now (call with the owning device current, for memory of another GPU).
  void reset();

 private:
  void* p_ = nullptr;
  size_t bytes_ = 0;
};

// A seed nobody used before in this process (time and a counter), so every check sees new inputs.
uint64_t freshSeed();
// Fills n elements with uniform values in [-r, r) (r a power of two: exact in every format).
void fillUniform(void* p, NumFormat f, size_t n, uint64_t seed, float r, cudaStream_t s);
// Writes the format's poison (a NaN) over n elements.
void poison(void* p, NumFormat f, size_t n, cudaStream_t s);
// Elements that are non-finite (still poisoned, or broken). Synchronizes.
Result<int64_t> countNonFinite(const void* p, NumFormat f, size_t n, cudaStream_t s);
// Copies n elements of format f from device to a host vector of bytes.
Result<std::vector<uint8_t>> toHost(const void* p, NumFormat f, size_t offset, size_t n);

// Times run(rep) with events on stream s: `warmup` untimed calls, then `reps` timed ones, each
// between its own pair of events; returns each rep's microseconds. run should rotate inputs by rep.
Result<std::vector<double>> timeReps(const std::function<Status(int rep)>& run, int warmup, int reps, cudaStream_t s);

// One figure failed with st: when the GPU context still works (a library status, a launch refused),
// the failure goes to `errors` and the part carries on (returns success); after a sticky fault
// (illegal address, ...) it returns the error so the part stops.
Status figureFailed(const Status& st, const std::string& what, std::vector<std::string>& errors);

// Input sets needed so that rotating among them defeats the L2: at least 2, and together over twice
// the L2 size; at most max_sets.
int rotationSets(size_t bytes_per_set, size_t l2_bytes, int max_sets);

}  // namespace gpudoctor::gpubench
