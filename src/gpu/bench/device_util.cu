#include "gpu/bench/device_util.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <atomic>
#include <chrono>

namespace gpudoctor::gpubench {

Status cudaCheck(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return {};
  return Error{std::string(what) + ": " + cudaGetErrorString(err)};
}

DeviceBuffer::~DeviceBuffer() { reset(); }

void DeviceBuffer::reset() {
  if (p_) cudaFree(p_);
  p_ = nullptr;
  bytes_ = 0;
}

Status DeviceBuffer::alloc(size_t bytes) {
  if (p_) cudaFree(p_);
  p_ = nullptr;
  bytes_ = 0;
  cudaError_t e = cudaMalloc(&p_, bytes);
  if (e != cudaSuccess) {
    p_ = nullptr;
    return Error{"cudaMalloc of " + std::to_string(bytes >> 20) + " MiB: " + cudaGetErrorString(e)};
  }
  bytes_ = bytes;
  return {};
}

uint64_t freshSeed() {
  static std::atomic<uint64_t> counter{0};
  uint64_t t = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  return mixBits(t, counter.fetch_add(1));
}

namespace {

__device__ __forceinline__ uint64_t mixBitsDev(uint64_t seed, uint64_t index) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ull * (index + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

template <class T>
__device__ __forceinline__ T fromFloat(float v);
template <>
__device__ __forceinline__ float fromFloat<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __half fromFloat<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 fromFloat<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <>
__device__ __forceinline__ __nv_fp8_e4m3 fromFloat<__nv_fp8_e4m3>(float v) {
  return __nv_fp8_e4m3(v);
}

template <class T>
__global__ void fillKernel(T* p, size_t n, uint64_t seed, float r) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    float u = static_cast<float>(mixBitsDev(seed, i) >> 40) * 5.9604644775390625e-8f;  // [0,1), 24 bits: exact
    p[i] = fromFloat<T>(-r + 2.0f * r * u);  // exact in fp32 for r a power of two (same as uniformAt)
  }
}

template <class U>
__global__ void poisonKernel(U* p, size_t n, U bits) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    p[i] = bits;
}

template <class U>
__global__ void nonFiniteKernel(const U* p, size_t n, U exp_mask, U nan_mask, unsigned long long* count) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    local += (p[i] & exp_mask) == nan_mask;
  if (local) atomicAdd(count, local);
}

int gridFor(size_t n) { return static_cast<int>(std::min<size_t>((n + 255) / 256, 132 * 16)); }

}  // namespace

void fillUniform(void* p, NumFormat f, size_t n, uint64_t seed, float r, cudaStream_t s) {
  int g = gridFor(n);
  switch (f) {
    case NumFormat::kFp32:
      fillKernel<<<g, 256, 0, s>>>(static_cast<float*>(p), n, seed, r);
      break;
    case NumFormat::kFp16:
      fillKernel<<<g, 256, 0, s>>>(static_cast<__half*>(p), n, seed, r);
      break;
    case NumFormat::kBf16:
      fillKernel<<<g, 256, 0, s>>>(static_cast<__nv_bfloat16*>(p), n, seed, r);
      break;
    case NumFormat::kFp8E4M3:
      fillKernel<<<g, 256, 0, s>>>(static_cast<__nv_fp8_e4m3*>(p), n, seed, r);
      break;
  }
}

void poison(void* p, NumFormat f, size_t n, cudaStream_t s) {
  int g = gridFor(n);
  uint32_t bits = poisonBits(f);
  switch (formatBytes(f)) {
    case 4:
      poisonKernel<<<g, 256, 0, s>>>(static_cast<uint32_t*>(p), n, bits);
      break;
    case 2:
      poisonKernel<<<g, 256, 0, s>>>(static_cast<uint16_t*>(p), n, static_cast<uint16_t>(bits));
      break;
    case 1:
      poisonKernel<<<g, 256, 0, s>>>(static_cast<uint8_t*>(p), n, static_cast<uint8_t>(bits));
      break;
  }
}

Result<int64_t> countNonFinite(const void* p, NumFormat f, size_t n, cudaStream_t s) {
  DeviceBuffer c;
  GPUB_TRY(c.alloc(sizeof(unsigned long long)));
  GPUB_CUDA(cudaMemsetAsync(c.get(), 0, sizeof(unsigned long long), s));
  int g = gridFor(n);
  auto* cnt = c.get<unsigned long long>();
  switch (f) {
    // Exponent all ones: NaN or infinity (fp8 e4m3fn has no infinity; its NaN is S.1111.111).
    case NumFormat::kFp32:
      nonFiniteKernel<<<g, 256, 0, s>>>(static_cast<const uint32_t*>(p), n, 0x7f800000u, 0x7f800000u, cnt);
      break;
    case NumFormat::kFp16:
      nonFiniteKernel<<<g, 256, 0, s>>>(static_cast<const uint16_t*>(p), n, uint16_t(0x7c00), uint16_t(0x7c00), cnt);
      break;
    case NumFormat::kBf16:
      nonFiniteKernel<<<g, 256, 0, s>>>(static_cast<const uint16_t*>(p), n, uint16_t(0x7f80), uint16_t(0x7f80), cnt);
      break;
    case NumFormat::kFp8E4M3:
      nonFiniteKernel<<<g, 256, 0, s>>>(static_cast<const uint8_t*>(p), n, uint8_t(0x7f), uint8_t(0x7f), cnt);
      break;
  }
  GPUB_CUDA(cudaGetLastError());
  unsigned long long host = 0;
  GPUB_CUDA(cudaMemcpyAsync(&host, cnt, sizeof host, cudaMemcpyDeviceToHost, s));
  GPUB_CUDA(cudaStreamSynchronize(s));
  return static_cast<int64_t>(host);
}

Result<std::vector<uint8_t>> toHost(const void* p, NumFormat f, size_t offset, size_t n) {
  size_t b = static_cast<size_t>(formatBytes(f));
  std::vector<uint8_t> v(n * b);
  GPUB_CUDA(cudaMemcpy(v.data(), static_cast<const char*>(p) + offset * b, n * b, cudaMemcpyDeviceToHost));
  return v;
}

Result<std::vector<double>> timeReps(const std::function<Status(int rep)>& run, int warmup, int reps, cudaStream_t s) {
  for (int i = 0; i < warmup; ++i) GPUB_TRY(run(i));
  std::vector<cudaEvent_t> ev(2 * static_cast<size_t>(reps));
  for (auto& e : ev) GPUB_CUDA(cudaEventCreate(&e));
  Status st;
  for (int i = 0; i < reps && st.ok(); ++i) {
    cudaEventRecord(ev[2 * i], s);
    st = run(warmup + i);
    cudaEventRecord(ev[2 * i + 1], s);
  }
  std::vector<double> us;
  if (st.ok()) st = cudaCheck(cudaStreamSynchronize(s), "timed kernels");
  for (int i = 0; i < reps && st.ok(); ++i) {
    float ms = 0;
    st = cudaCheck(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]), "cudaEventElapsedTime");
    us.push_back(ms * 1e3);
  }
  for (auto& e : ev) cudaEventDestroy(e);
  if (!st.ok()) return Error{st.message()};
  return us;
}

Status figureFailed(const Status& st, const std::string& what, std::vector<std::string>& errors) {
  if (st.ok()) return {};
  cudaError_t sticky = cudaDeviceSynchronize();
  if (sticky != cudaSuccess) return Error{what + ": " + st.message() + " (then " + cudaGetErrorString(sticky) + ")"};
  cudaGetLastError();
  errors.push_back(what + " failed: " + st.message());
  return {};
}

int rotationSets(size_t bytes_per_set, size_t l2_bytes, int max_sets) {
  size_t need = bytes_per_set ? (2 * l2_bytes + bytes_per_set - 1) / bytes_per_set : 2;
  return static_cast<int>(std::clamp<size_t>(std::max<size_t>(need, 2), 2, std::max(2, max_sets)));
}

}  // namespace gpudoctor::gpubench
