// Memory bandwidth: HBM copy, read-only and write-only kernels (16-byte accesses, grid-stride, 1 GiB
// buffers: twenty times the L2), host<->device copies from pageable and pinned memory in both
// directions, and peer-to-peer copies when there are several GPUs. Each path is checked word for word.
#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "gpu/bench/device_util.h"
#include "gpu/bench/gpu_bench.h"

namespace gpudoctor::gpubench {

namespace {

__host__ __device__ __forceinline__ uint32_t patternWord(size_t i, uint32_t seed) {
  return static_cast<uint32_t>(i) * 2654435761u ^ seed ^ static_cast<uint32_t>(i >> 32);
}

__global__ void copyKernel(const uint4* __restrict__ src, uint4* __restrict__ dst, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

// Sums every 32-bit word (mod 2^64) so no load can be optimized away; one atomic per block.
__global__ void readKernel(const uint4* __restrict__ src, size_t n, unsigned long long* sum) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    uint4 v = src[i];
    local += static_cast<unsigned long long>(v.x) + v.y + v.z + v.w;
  }
  for (int o = 16; o > 0; o >>= 1) local += __shfl_xor_sync(0xffffffffu, local, o);
  __shared__ unsigned long long warp_sums[32];
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = local;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long t = 0;
    for (int w = 0; w < static_cast<int>(blockDim.x >> 5); ++w) t += warp_sums[w];
    atomicAdd(sum, t);
  }
}

__global__ void writeKernel(uint4* __restrict__ dst, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    dst[i] = make_uint4(patternWord(4 * i, seed), patternWord(4 * i + 1, seed), patternWord(4 * i + 2, seed),
                        patternWord(4 * i + 3, seed));
}

__global__ void diffBuffersKernel(const uint32_t* a, const uint32_t* b, size_t n, unsigned long long* count) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    local += a[i] != b[i];
  if (local) atomicAdd(count, local);
}

__global__ void diffPatternKernel(const uint32_t* a, size_t n, uint32_t seed, unsigned long long* count) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    local += a[i] != patternWord(i, seed);
  if (local) atomicAdd(count, local);
}

// Runs a counting kernel into a fresh counter and returns the count.
template <class Launch>
Result<int64_t> count(cudaStream_t s, Launch launch) {
  DeviceBuffer c;
  GPUB_TRY(c.alloc(sizeof(unsigned long long)));
  GPUB_CUDA(cudaMemsetAsync(c.get(), 0, sizeof(unsigned long long), s));
  launch(c.get<unsigned long long>());
  GPUB_CUDA(cudaGetLastError());
  unsigned long long h = 0;
  GPUB_CUDA(cudaMemcpyAsync(&h, c.get(), sizeof h, cudaMemcpyDeviceToHost, s));
  GPUB_CUDA(cudaStreamSynchronize(s));
  return static_cast<int64_t>(h);
}

CheckFigure wordCheck(int64_t words, int64_t wrong, const std::string& what) {
  CheckFigure c;
  c.checked = words;
  c.unwritten = wrong;
  c.passed = wrong == 0;
  c.note = fmt::format("{}: {} of {} words differ", what, wrong, words);
  return c;
}

BandwidthFigure figure(const std::string& name, int64_t bytes, const std::vector<double>& us, CheckFigure chk) {
  BandwidthFigure f;
  f.name = name;
  f.bytes = bytes;
  f.reps = static_cast<int>(us.size());
  f.median_us = median(us);
  f.gbps = f.median_us > 0 ? static_cast<double>(bytes) / (f.median_us * 1e3) : 0;
  f.check = std::move(chk);
  return f;
}

struct PinnedHost {
  void* p = nullptr;
  ~PinnedHost() {
    if (p) cudaFreeHost(p);
  }
};

// What every measurement of the part uses: the context, its stream, the launch shape and the
// repetitions, and where the figures go.
struct Bw {
  const BenchContext& ctx;
  cudaStream_t s;
  int grid, block, reps;
  GpuBenchResult& out;
};

// HBM copy: a -> b checked word for word, then timed alternating direction.
Status hbmCopy(const Bw& k, DeviceBuffer& a, DeviceBuffer& b, size_t bytes) {
  const size_t n4 = bytes / 16, words = bytes / 4;
  cudaStream_t s = k.s;
  k.ctx.say("bandwidth hbm copy");
  fillUniform(a.get(), NumFormat::kFp32, words, freshSeed(), 1.f, s);
  poison(b.get(), NumFormat::kFp32, words, s);
  copyKernel<<<k.grid, k.block, 0, s>>>(a.get<uint4>(), b.get<uint4>(), n4);
  auto wrong = count(s, [&](unsigned long long* c) {
    diffBuffersKernel<<<k.grid, k.block, 0, s>>>(a.get<uint32_t>(), b.get<uint32_t>(), words, c);
  });
  if (!wrong.ok()) return Error{wrong.error().message};
  // Alternate direction each rep: a -> b, b -> a (the same bytes, never a cached copy).
  auto us = timeReps(
      [&](int rep) {
        const uint4* src = (rep % 2 ? b : a).get<uint4>();
        uint4* dst = (rep % 2 ? a : b).get<uint4>();
        copyKernel<<<k.grid, k.block, 0, s>>>(src, dst, n4);
        return cudaCheck(cudaGetLastError(), "copy kernel");
      },
      3, k.reps, s);
  if (!us.ok()) return Error{us.error().message};
  k.out.bandwidth.push_back(figure("hbm copy", static_cast<int64_t>(2 * bytes), us.value(),
                                   wordCheck(words, wrong.value(), "copy vs source")));
  return {};
}

// HBM read: the sum of every word against the host's, then timed.
Status hbmRead(const Bw& k, DeviceBuffer& a, DeviceBuffer& b, size_t bytes) {
  const size_t n4 = bytes / 16, words = bytes / 4;
  cudaStream_t s = k.s;
  k.ctx.say("bandwidth hbm read");
  uint64_t seed = freshSeed();
  fillUniform(a.get(), NumFormat::kFp32, words, seed, 1.f, s);
  DeviceBuffer sum;
  GPUB_TRY(sum.alloc(8));
  GPUB_CUDA(cudaMemsetAsync(sum.get(), 0, 8, s));
  readKernel<<<k.grid, k.block, 0, s>>>(a.get<uint4>(), n4, sum.get<unsigned long long>());
  unsigned long long got = 0;
  GPUB_CUDA(cudaMemcpyAsync(&got, sum.get(), 8, cudaMemcpyDeviceToHost, s));
  GPUB_CUDA(cudaStreamSynchronize(s));
  // The host regenerates every input word from the seed: the sum is exact (mod 2^64).
  unsigned long long want = 0;
  for (size_t i = 0; i < words; ++i) {
    float f = static_cast<float>(uniformAt(seed, i, 1.0));
    uint32_t w;
    std::memcpy(&w, &f, 4);
    want += w;
  }
  auto us = timeReps(
      [&](int rep) {
        readKernel<<<k.grid, k.block, 0, s>>>((rep % 2 ? b : a).get<uint4>(), n4, sum.get<unsigned long long>());
        return cudaCheck(cudaGetLastError(), "read kernel");
      },
      3, k.reps, s);
  if (!us.ok()) return Error{us.error().message};
  CheckFigure c = wordCheck(words, got == want ? 0 : 1, "sum of all words against the host's regenerated inputs");
  c.unwritten = 0;
  c.passed = got == want;
  k.out.bandwidth.push_back(figure("hbm read", static_cast<int64_t>(bytes), us.value(), c));
  return {};
}

// HBM write: a seeded pattern checked word for word, then timed.
Status hbmWrite(const Bw& k, DeviceBuffer& a, DeviceBuffer& b, size_t bytes) {
  const size_t n4 = bytes / 16, words = bytes / 4;
  cudaStream_t s = k.s;
  k.ctx.say("bandwidth hbm write");
  uint32_t seed = static_cast<uint32_t>(freshSeed());
  poison(b.get(), NumFormat::kFp32, words, s);
  writeKernel<<<k.grid, k.block, 0, s>>>(b.get<uint4>(), n4, seed);
  auto wrong = count(s, [&](unsigned long long* c) {
    diffPatternKernel<<<k.grid, k.block, 0, s>>>(b.get<uint32_t>(), words, seed, c);
  });
  if (!wrong.ok()) return Error{wrong.error().message};
  auto us = timeReps(
      [&](int rep) {
        writeKernel<<<k.grid, k.block, 0, s>>>((rep % 2 ? a : b).get<uint4>(), n4, seed + rep);
        return cudaCheck(cudaGetLastError(), "write kernel");
      },
      3, k.reps, s);
  if (!us.ok()) return Error{us.error().message};
  k.out.bandwidth.push_back(
      figure("hbm write", static_cast<int64_t>(bytes), us.value(), wordCheck(words, wrong.value(), "written pattern")));
  return {};
}

// Host to device from `host` ("pinned" or "pageable"): a pattern checked on the device, then timed.
Status hostToDevice(const Bw& k, DeviceBuffer& a, uint32_t* host, size_t hbytes, const std::string& kind) {
  const size_t hwords = hbytes / 4;
  cudaStream_t s = k.s;
  k.ctx.say("bandwidth h2d " + kind);
  uint32_t seed = static_cast<uint32_t>(freshSeed());
  for (size_t i = 0; i < hwords; ++i) host[i] = patternWord(i, seed);
  poison(a.get(), NumFormat::kFp32, hwords, s);
  GPUB_CUDA(cudaMemcpyAsync(a.get(), host, hbytes, cudaMemcpyHostToDevice, s));
  auto wrong = count(s, [&](unsigned long long* c) {
    diffPatternKernel<<<k.grid, k.block, 0, s>>>(a.get<uint32_t>(), hwords, seed, c);
  });
  if (!wrong.ok()) return Error{wrong.error().message};
  auto us = timeReps(
      [&](int) {
        return cudaCheck(cudaMemcpyAsync(a.get(), host, hbytes, cudaMemcpyHostToDevice, s), "cudaMemcpyAsync h2d");
      },
      2, k.reps, s);
  if (!us.ok()) return Error{us.error().message};
  k.out.bandwidth.push_back(figure("h2d " + kind, static_cast<int64_t>(hbytes), us.value(),
                                   wordCheck(hwords, wrong.value(), "device copy vs host pattern")));
  return {};
}

// Device to host into `host`: a pattern checked on the host, then timed.
Status deviceToHost(const Bw& k, DeviceBuffer& b, uint32_t* host, size_t hbytes, const std::string& kind) {
  const size_t hwords = hbytes / 4;
  cudaStream_t s = k.s;
  k.ctx.say("bandwidth d2h " + kind);
  uint32_t seed = static_cast<uint32_t>(freshSeed());
  writeKernel<<<k.grid, k.block, 0, s>>>(b.get<uint4>(), hbytes / 16, seed);
  std::memset(host, 0xff, hbytes);
  GPUB_CUDA(cudaMemcpyAsync(host, b.get(), hbytes, cudaMemcpyDeviceToHost, s));
  GPUB_CUDA(cudaStreamSynchronize(s));
  int64_t wrong = 0;
  for (size_t i = 0; i < hwords; ++i) wrong += host[i] != patternWord(i, seed);
  auto us = timeReps(
      [&](int) {
        return cudaCheck(cudaMemcpyAsync(host, b.get(), hbytes, cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync d2h");
      },
      2, k.reps, s);
  if (!us.ok()) return Error{us.error().message};
  k.out.bandwidth.push_back(figure("d2h " + kind, static_cast<int64_t>(hbytes), us.value(),
                                   wordCheck(hwords, wrong, "host copy vs device pattern")));
  return {};
}

// Host <-> device: pinned (DMA straight from the buffer) against pageable (staged by the driver).
Status hostDevice(const Bw& k, DeviceBuffer& a, DeviceBuffer& b) {
  size_t hbytes = k.ctx.tiny() ? (4u << 20) : k.ctx.opt->quick ? (64u << 20) : (256u << 20);
  size_t hwords = hbytes / 4;
  PinnedHost pinned;
  GPUB_CUDA(cudaMallocHost(&pinned.p, hbytes));
  std::unique_ptr<uint32_t[]> pageable(new uint32_t[hwords]);
  for (bool pin : {true, false}) {
    uint32_t* host = pin ? static_cast<uint32_t*>(pinned.p) : pageable.get();
    std::string kind = pin ? "pinned" : "pageable";
    GPUB_TRY(hostToDevice(k, a, host, hbytes, kind));
    GPUB_TRY(deviceToHost(k, b, host, hbytes, kind));
  }
  return {};
}

// Peer access both ways between this GPU and `peer`, where the hardware allows it (else a note:
// the copies are staged through the host).
Status enablePeerAccess(const Bw& k, int peer) {
  const int device = k.ctx.device;
  int can = 0;
  cudaDeviceCanAccessPeer(&can, device, peer);
  if (can) {
    cudaError_t e = cudaDeviceEnablePeerAccess(peer, 0);
    if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) return cudaCheck(e, "cudaDeviceEnablePeerAccess");
    cudaGetLastError();
    GPUB_CUDA(cudaSetDevice(peer));
    e = cudaDeviceEnablePeerAccess(device, 0);
    cudaGetLastError();
    GPUB_CUDA(cudaSetDevice(device));
  } else {
    k.out.notes.push_back(
        fmt::format("GPU {} cannot access GPU {} directly: P2P copies are staged through the host", device, peer));
  }
  return {};
}

// One P2P direction (outbound: this GPU's a -> the peer's remote): a pattern checked on the
// receiving GPU, then timed.
Status p2pCopy(const Bw& k, DeviceBuffer& a, DeviceBuffer& remote, int peer, size_t pbytes, bool outbound) {
  const int device = k.ctx.device;
  const size_t pwords = pbytes / 4;
  const int grid = k.grid, block = k.block;
  cudaStream_t s = k.s;
  std::string name = outbound ? fmt::format("p2p {}->{}", device, peer) : fmt::format("p2p {}->{}", peer, device);
  k.ctx.say("bandwidth " + name);
  uint32_t seed = static_cast<uint32_t>(freshSeed());
  int64_t wrong = 0;
  if (outbound) {
    writeKernel<<<grid, block, 0, s>>>(a.get<uint4>(), pbytes / 16, seed);
    GPUB_CUDA(cudaStreamSynchronize(s));
    GPUB_CUDA(cudaSetDevice(peer));
    poison(remote.get(), NumFormat::kFp32, pwords, nullptr);
    GPUB_CUDA(cudaDeviceSynchronize());
    GPUB_CUDA(cudaSetDevice(device));
    GPUB_CUDA(cudaMemcpyPeerAsync(remote.get(), peer, a.get(), device, pbytes, s));
    GPUB_CUDA(cudaStreamSynchronize(s));
    GPUB_CUDA(cudaSetDevice(peer));
    auto w = count(nullptr, [&](unsigned long long* c) {
      diffPatternKernel<<<grid, block>>>(remote.get<uint32_t>(), pwords, seed, c);
    });
    GPUB_CUDA(cudaSetDevice(device));
    if (!w.ok()) return Error{w.error().message};
    wrong = w.value();
  } else {
    GPUB_CUDA(cudaSetDevice(peer));
    writeKernel<<<grid, block>>>(remote.get<uint4>(), pbytes / 16, seed);
    GPUB_CUDA(cudaDeviceSynchronize());
    GPUB_CUDA(cudaSetDevice(device));
    poison(a.get(), NumFormat::kFp32, pwords, s);
    GPUB_CUDA(cudaMemcpyPeerAsync(a.get(), device, remote.get(), peer, pbytes, s));
    auto w = count(s, [&](unsigned long long* c) {
      diffPatternKernel<<<grid, block, 0, s>>>(a.get<uint32_t>(), pwords, seed, c);
    });
    if (!w.ok()) return Error{w.error().message};
    wrong = w.value();
  }
  auto us = timeReps(
      [&](int) {
        return outbound ? cudaCheck(cudaMemcpyPeerAsync(remote.get(), peer, a.get(), device, pbytes, s),
                                    "cudaMemcpyPeerAsync")
                        : cudaCheck(cudaMemcpyPeerAsync(a.get(), device, remote.get(), peer, pbytes, s),
                                    "cudaMemcpyPeerAsync");
      },
      2, k.reps, s);
  if (!us.ok()) return Error{us.error().message};
  k.out.bandwidth.push_back(
      figure(name, static_cast<int64_t>(pbytes), us.value(), wordCheck(pwords, wrong, "peer copy vs pattern")));
  return {};
}

// Peer to peer between this GPU and the next one, both directions (skipped with one GPU); the
// peer's buffer is freed on its own device.
Status peerToPeer(const Bw& k, DeviceBuffer& a) {
  const int device = k.ctx.device;
  int gpus = 0;
  GPUB_CUDA(cudaGetDeviceCount(&gpus));
  if (gpus < 2) {
    k.out.notes.push_back("P2P skipped: one GPU");
    return {};
  }
  int peer = (device + 1) % gpus;
  GPUB_TRY(enablePeerAccess(k, peer));
  size_t pbytes = k.ctx.tiny() ? (4u << 20) : k.ctx.opt->quick ? (64u << 20) : (256u << 20);
  DeviceBuffer remote;
  GPUB_CUDA(cudaSetDevice(peer));
  Status alloc = remote.alloc(pbytes);
  GPUB_CUDA(cudaSetDevice(device));
  GPUB_TRY(alloc);
  for (bool outbound : {true, false}) GPUB_TRY(p2pCopy(k, a, remote, peer, pbytes, outbound));
  GPUB_CUDA(cudaSetDevice(peer));
  remote.reset();
  GPUB_CUDA(cudaSetDevice(device));
  return {};
}

}  // namespace

Status runBandwidthBench(const BenchContext& ctx, GpuBenchResult& out) {
  auto s = static_cast<cudaStream_t>(ctx.stream);
  int sms = 0;
  GPUB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ctx.device));
  const Bw k{ctx, s, sms * 8, 256, ctx.reps(), out};
  // HBM: buffers far larger than the L2 so every repetition streams from memory.
  size_t bytes = ctx.tiny() ? (16u << 20) : ctx.opt->quick ? (256u << 20) : (1u << 30);
  DeviceBuffer a, b;
  GPUB_TRY(a.alloc(bytes));
  GPUB_TRY(b.alloc(bytes));
  GPUB_TRY(hbmCopy(k, a, b, bytes));
  GPUB_TRY(hbmRead(k, a, b, bytes));
  GPUB_TRY(hbmWrite(k, a, b, bytes));
  GPUB_TRY(hostDevice(k, a, b));
  return peerToPeer(k, a);
}

}  // namespace gpudoctor::gpubench
