#include "gpu/pinned_staging.h"

#include <cuda_runtime.h>

#include <string>

namespace gpudoctor {

StagingAllocator pinnedStaging() {
  // One probe allocation: on a host without a GPU or driver, cudaHostAlloc fails and we say so once
  // instead of failing every buffer.
  void* probe = nullptr;
  cudaError_t e = cudaHostAlloc(&probe, 4096, cudaHostAllocDefault);
  if (e != cudaSuccess) {
    StagingAllocator a = pageableStaging();
    a.kind = std::string("pageable (cudaHostAlloc failed: ") + cudaGetErrorString(e) + ")";
    cudaGetLastError();  // clear the sticky-free error so later CUDA calls start clean
    return a;
  }
  cudaFreeHost(probe);
  StagingAllocator a;
  a.alloc = [](size_t n) -> void* {
    void* p = nullptr;
    return cudaHostAlloc(&p, n, cudaHostAllocDefault) == cudaSuccess ? p : nullptr;
  };
  a.release = [](void* p) { cudaFreeHost(p); };
  a.kind = "pinned (cudaHostAlloc)";
  return a;
}

}  // namespace gpudoctor
