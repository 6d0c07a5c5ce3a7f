#include "gpu/p2p_bench.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/numeric_check.h"

namespace gpudoctor {

namespace {

#define CUDA_TRY(call)                                                                       \
  do {                                                                                       \
    cudaError_t e_ = (call);                                                                 \
    if (e_ != cudaSuccess) return Error{std::string(#call) + ": " + cudaGetErrorString(e_)}; \
  } while (0)

// GB/s of `repeats` copies issued by `copy` on `stream`, each timed with its own pair of events.
template <class Copy>
Result<double> timeCopies(cudaStream_t stream, int64_t bytes, int repeats, Copy copy) {
  cudaEvent_t start, stop;
  CUDA_TRY(cudaEventCreate(&start));
  CUDA_TRY(cudaEventCreate(&stop));
  CUDA_TRY(copy());  // warm-up: first-touch mappings, peer link training
  CUDA_TRY(cudaStreamSynchronize(stream));
  std::vector<double> gbps;
  for (int r = 0; r < repeats; ++r) {
    CUDA_TRY(cudaEventRecord(start, stream));
    CUDA_TRY(copy());
    CUDA_TRY(cudaEventRecord(stop, stream));
    CUDA_TRY(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_TRY(cudaEventElapsedTime(&ms, start, stop));
    if (ms > 0) gbps.push_back(static_cast<double>(bytes) / (ms * 1e-3) / 1e9);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return median(gbps);
}

}  // namespace

Result<BandwidthMeasurement> measureCopyBandwidth(int64_t bytes, int repeats) {
  // Number devices as NVML and nvidia-smi do (PCI bus order), so the matrix lines up with topo's.
  setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
  int n = 0;
  CUDA_TRY(cudaGetDeviceCount(&n));
  if (n == 0) return Error{"no CUDA devices"};
  BandwidthMeasurement m;
  m.bytes = bytes;
  m.repeats = repeats;
  m.p2p_gbps.assign(n, std::vector<double>(n, 0));
  m.p2p_access.assign(n, std::vector<bool>(n, false));
  m.h2d_gbps.assign(n, 0);
  m.d2h_gbps.assign(n, 0);
  std::vector<void*> buf(n, nullptr);
  std::vector<cudaStream_t> stream(n);
  for (int d = 0; d < n; ++d) {
    CUDA_TRY(cudaSetDevice(d));
    CUDA_TRY(cudaMalloc(&buf[d], static_cast<size_t>(bytes) * 2));  // source and destination halves
    CUDA_TRY(cudaMemset(buf[d], 1, static_cast<size_t>(bytes) * 2));
    CUDA_TRY(cudaStreamCreateWithFlags(&stream[d], cudaStreamNonBlocking));
    for (int p = 0; p < n; ++p) {
      if (p == d) continue;
      int can = 0;
      CUDA_TRY(cudaDeviceCanAccessPeer(&can, d, p));
      m.p2p_access[d][p] = can != 0;
      if (can) {
        cudaError_t e = cudaDeviceEnablePeerAccess(p, 0);
        if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled)
          return Error{"cudaDeviceEnablePeerAccess(" + std::to_string(p) + ") on GPU " + std::to_string(d) + ": " +
                       cudaGetErrorString(e)};
        cudaGetLastError();
      }
    }
  }
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d) {
      // Issued on the source GPU's stream: the copy engine that pushes the data is the one timed.
      CUDA_TRY(cudaSetDevice(s));
      char* dst = static_cast<char*>(buf[d]) + bytes;  // the second half: never the source
      auto r = timeCopies(stream[s], bytes, repeats, [&] {
        return cudaMemcpyPeerAsync(dst, d, buf[s], s, static_cast<size_t>(bytes), stream[s]);
      });
      if (!r.ok()) return r.error();
      m.p2p_gbps[s][d] = r.value();
    }
  void* host = nullptr;
  CUDA_TRY(cudaHostAlloc(&host, static_cast<size_t>(bytes), cudaHostAllocPortable));
  for (int d = 0; d < n; ++d) {
    CUDA_TRY(cudaSetDevice(d));
    auto h2d = timeCopies(stream[d], bytes, repeats, [&] {
      return cudaMemcpyAsync(buf[d], host, static_cast<size_t>(bytes), cudaMemcpyHostToDevice, stream[d]);
    });
    if (!h2d.ok()) return h2d.error();
    auto d2h = timeCopies(stream[d], bytes, repeats, [&] {
      return cudaMemcpyAsync(host, buf[d], static_cast<size_t>(bytes), cudaMemcpyDeviceToHost, stream[d]);
    });
    if (!d2h.ok()) return d2h.error();
    m.h2d_gbps[d] = h2d.value();
    m.d2h_gbps[d] = d2h.value();
  }
  cudaFreeHost(host);
  for (int d = 0; d < n; ++d) {
    cudaSetDevice(d);
    cudaStreamDestroy(stream[d]);
    cudaFree(buf[d]);
  }
  return m;
}

}  // namespace gpudoctor

#undef CUDA_TRY  // file-local: another file of a unity batch may define its own
