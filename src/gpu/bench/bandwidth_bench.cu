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

}  // namespace

Status runBandwidthBench(const BenchContext& ctx, GpuBenchResult& out) {
  auto s = static_cast<cudaStream_t>(ctx.stream);
  int sms = 0;
  GPUB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ctx.device));
  const int grid = sms * 8, block = 256;
  // HBM: buffers far larger than the L2 so every repetition streams from memory.
  size_t bytes = ctx.tiny() ? (16u << 20) : ctx.opt->quick ? (256u << 20) : (1u << 30);
  size_t n4 = bytes / 16, words = bytes / 4;
  DeviceBuffer a, b;
  GPUB_TRY(a.alloc(bytes));
  GPUB_TRY(b.alloc(bytes));
  int reps = ctx.reps();
  {
    ctx.say("bandwidth hbm copy");
    fillUniform(a.get(), NumFormat::kFp32, words, freshSeed(), 1.f, s);
    poison(b.get(), NumFormat::kFp32, words, s);
    copyKernel<<<grid, block, 0, s>>>(a.get<uint4>(), b.get<uint4>(), n4);
    auto wrong = count(s, [&](unsigned long long* c) {
      diffBuffersKernel<<<grid, block, 0, s>>>(a.get<uint32_t>(), b.get<uint32_t>(), words, c);
    });
    if (!wrong.ok()) return Error{wrong.error().message};
    // Alternate direction each rep: a -> b, b -> a (the same bytes, never a cached copy).
    auto us = timeReps(
        [&](int rep) {
          const uint4* src = (rep % 2 ? b : a).get<uint4>();
          uint4* dst = (rep % 2 ? a : b).get<uint4>();
          copyKernel<<<grid, block, 0, s>>>(src, dst, n4);
          return cudaCheck(cudaGetLastError(), "copy kernel");
        },
        3, reps, s);
    if (!us.ok()) return Error{us.error().message};
    out.bandwidth.push_back(figure("hbm copy", static_cast<int64_t>(2 * bytes), us.value(),
                                   wordCheck(words, wrong.value(), "copy vs source")));
  }
  {
    ctx.say("bandwidth hbm read");
    uint64_t seed = freshSeed();
    fillUniform(a.get(), NumFormat::kFp32, words, seed, 1.f, s);
    DeviceBuffer sum;
    GPUB_TRY(sum.alloc(8));
    GPUB_CUDA(cudaMemsetAsync(sum.get(), 0, 8, s));
    readKernel<<<grid, block, 0, s>>>(a.get<uint4>(), n4, sum.get<unsigned long long>());
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
          readKernel<<<grid, block, 0, s>>>((rep % 2 ? b : a).get<uint4>(), n4, sum.get<unsigned long long>());
          return cudaCheck(cudaGetLastError(), "read kernel");
        },
        3, reps, s);
    if (!us.ok()) return Error{us.error().message};
    CheckFigure c = wordCheck(words, got == want ? 0 : 1, "sum of all words against the host's regenerated inputs");
    c.unwritten = 0;
    c.passed = got == want;
    out.bandwidth.push_back(figure("hbm read", static_cast<int64_t>(bytes), us.value(), c));
  }
  {
    ctx.say("bandwidth hbm write");
    uint32_t seed = static_cast<uint32_t>(freshSeed());
    poison(b.get(), NumFormat::kFp32, words, s);
    writeKernel<<<grid, block, 0, s>>>(b.get<uint4>(), n4, seed);
    auto wrong = count(
        s, [&](unsigned long long* c) { diffPatternKernel<<<grid, block, 0, s>>>(b.get<uint32_t>(), words, seed, c); });
    if (!wrong.ok()) return Error{wrong.error().message};
    auto us = timeReps(
        [&](int rep) {
          writeKernel<<<grid, block, 0, s>>>((rep % 2 ? a : b).get<uint4>(), n4, seed + rep);
          return cudaCheck(cudaGetLastError(), "write kernel");
        },
        3, reps, s);
    if (!us.ok()) return Error{us.error().message};
    out.bandwidth.push_back(figure("hbm write", static_cast<int64_t>(bytes), us.value(),
                                   wordCheck(words, wrong.value(), "written pattern")));
  }
  // Host <-> device: pinned (DMA straight from the buffer) against pageable (staged by the driver).
  size_t hbytes = ctx.tiny() ? (4u << 20) : ctx.opt->quick ? (64u << 20) : (256u << 20);
  size_t hwords = hbytes / 4;
  PinnedHost pinned;
  GPUB_CUDA(cudaMallocHost(&pinned.p, hbytes));
  std::unique_ptr<uint32_t[]> pageable(new uint32_t[hwords]);
  for (bool pin : {true, false}) {
    uint32_t* host = pin ? static_cast<uint32_t*>(pinned.p) : pageable.get();
    std::string kind = pin ? "pinned" : "pageable";
    {
      ctx.say("bandwidth h2d " + kind);
      uint32_t seed = static_cast<uint32_t>(freshSeed());
      for (size_t i = 0; i < hwords; ++i) host[i] = patternWord(i, seed);
      poison(a.get(), NumFormat::kFp32, hwords, s);
      GPUB_CUDA(cudaMemcpyAsync(a.get(), host, hbytes, cudaMemcpyHostToDevice, s));
      auto wrong = count(s, [&](unsigned long long* c) {
        diffPatternKernel<<<grid, block, 0, s>>>(a.get<uint32_t>(), hwords, seed, c);
      });
      if (!wrong.ok()) return Error{wrong.error().message};
      auto us = timeReps(
          [&](int) {
            return cudaCheck(cudaMemcpyAsync(a.get(), host, hbytes, cudaMemcpyHostToDevice, s), "cudaMemcpyAsync h2d");
          },
          2, reps, s);
      if (!us.ok()) return Error{us.error().message};
      out.bandwidth.push_back(figure("h2d " + kind, static_cast<int64_t>(hbytes), us.value(),
                                     wordCheck(hwords, wrong.value(), "device copy vs host pattern")));
    }
    {
      ctx.say("bandwidth d2h " + kind);
      uint32_t seed = static_cast<uint32_t>(freshSeed());
      writeKernel<<<grid, block, 0, s>>>(b.get<uint4>(), hbytes / 16, seed);
      std::memset(host, 0xff, hbytes);
      GPUB_CUDA(cudaMemcpyAsync(host, b.get(), hbytes, cudaMemcpyDeviceToHost, s));
      GPUB_CUDA(cudaStreamSynchronize(s));
      int64_t wrong = 0;
      for (size_t i = 0; i < hwords; ++i) wrong += host[i] != patternWord(i, seed);
      auto us = timeReps(
          [&](int) {
            return cudaCheck(cudaMemcpyAsync(host, b.get(), hbytes, cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync d2h");
          },
          2, reps, s);
      if (!us.ok()) return Error{us.error().message};
      out.bandwidth.push_back(figure("d2h " + kind, static_cast<int64_t>(hbytes), us.value(),
                                     wordCheck(hwords, wrong, "host copy vs device pattern")));
    }
  }
  // Peer to peer between this GPU and the next one, both directions.
  int gpus = 0;
  GPUB_CUDA(cudaGetDeviceCount(&gpus));
  if (gpus < 2) {
    out.notes.push_back("P2P skipped: one GPU");
    return {};
  }
  int peer = (ctx.device + 1) % gpus;
  int can = 0;
  cudaDeviceCanAccessPeer(&can, ctx.device, peer);
  if (can) {
    cudaError_t e = cudaDeviceEnablePeerAccess(peer, 0);
    if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) return cudaCheck(e, "cudaDeviceEnablePeerAccess");
    cudaGetLastError();
    GPUB_CUDA(cudaSetDevice(peer));
    e = cudaDeviceEnablePeerAccess(ctx.device, 0);
    cudaGetLastError();
    GPUB_CUDA(cudaSetDevice(ctx.device));
  } else {
    out.notes.push_back(
        fmt::format("GPU {} cannot access GPU {} directly: P2P copies are staged through the host", ctx.device, peer));
  }
  size_t pbytes = ctx.tiny() ? (4u << 20) : ctx.opt->quick ? (64u << 20) : (256u << 20);
  size_t pwords = pbytes / 4;
  DeviceBuffer remote;
  GPUB_CUDA(cudaSetDevice(peer));
  Status alloc = remote.alloc(pbytes);
  GPUB_CUDA(cudaSetDevice(ctx.device));
  GPUB_TRY(alloc);
  for (bool outbound : {true, false}) {
    std::string name =
        outbound ? fmt::format("p2p {}->{}", ctx.device, peer) : fmt::format("p2p {}->{}", peer, ctx.device);
    ctx.say("bandwidth " + name);
    uint32_t seed = static_cast<uint32_t>(freshSeed());
    int64_t wrong = 0;
    if (outbound) {
      writeKernel<<<grid, block, 0, s>>>(a.get<uint4>(), pbytes / 16, seed);
      GPUB_CUDA(cudaStreamSynchronize(s));
      GPUB_CUDA(cudaSetDevice(peer));
      poison(remote.get(), NumFormat::kFp32, pwords, nullptr);
      GPUB_CUDA(cudaDeviceSynchronize());
      GPUB_CUDA(cudaSetDevice(ctx.device));
      GPUB_CUDA(cudaMemcpyPeerAsync(remote.get(), peer, a.get(), ctx.device, pbytes, s));
      GPUB_CUDA(cudaStreamSynchronize(s));
      GPUB_CUDA(cudaSetDevice(peer));
      auto w = count(nullptr, [&](unsigned long long* c) {
        diffPatternKernel<<<grid, block>>>(remote.get<uint32_t>(), pwords, seed, c);
      });
      GPUB_CUDA(cudaSetDevice(ctx.device));
      if (!w.ok()) return Error{w.error().message};
      wrong = w.value();
    } else {
      GPUB_CUDA(cudaSetDevice(peer));
      writeKernel<<<grid, block>>>(remote.get<uint4>(), pbytes / 16, seed);
      GPUB_CUDA(cudaDeviceSynchronize());
      GPUB_CUDA(cudaSetDevice(ctx.device));
      poison(a.get(), NumFormat::kFp32, pwords, s);
      GPUB_CUDA(cudaMemcpyPeerAsync(a.get(), ctx.device, remote.get(), peer, pbytes, s));
      auto w = count(s, [&](unsigned long long* c) {
        diffPatternKernel<<<grid, block, 0, s>>>(a.get<uint32_t>(), pwords, seed, c);
      });
      if (!w.ok()) return Error{w.error().message};
      wrong = w.value();
    }
    auto us = timeReps(
        [&](int) {
          return outbound ? cudaCheck(cudaMemcpyPeerAsync(remote.get(), peer, a.get(), ctx.device, pbytes, s),
                                      "cudaMemcpyPeerAsync")
                          : cudaCheck(cudaMemcpyPeerAsync(a.get(), ctx.device, remote.get(), peer, pbytes, s),
                                      "cudaMemcpyPeerAsync");
        },
        2, reps, s);
    if (!us.ok()) return Error{us.error().message};
    out.bandwidth.push_back(
        figure(name, static_cast<int64_t>(pbytes), us.value(), wordCheck(pwords, wrong, "peer copy vs pattern")));
  }
  GPUB_CUDA(cudaSetDevice(peer));
  remote.reset();
  GPUB_CUDA(cudaSetDevice(ctx.device));
  return {};
}

}  // namespace gpudoctor::gpubench
