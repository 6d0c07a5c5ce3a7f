#include "gpu/bench/gpu_bench.h"

#include <cuda_runtime.h>

#include <fmt/format.h>

#include "gpu/bench/device_util.h"

namespace gpudoctor {

using namespace gpubench;

Result<GpuBenchResult> runGpuBench(const GpuBenchOptions& opt) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess)
    return Error{
        std::string(
            "no usable GPU (no NVIDIA driver or device, or a driver older than CUDA 13): cudaGetDeviceCount: ") +
        cudaGetErrorString(e)};
  if (count == 0) return Error{"no CUDA devices"};
  if (opt.device < 0 || opt.device >= count)
    return Error{fmt::format("--device {}: this host has {} GPU(s)", opt.device, count)};
  GPUB_CUDA(cudaSetDevice(opt.device));
  cudaDeviceProp p{};
  GPUB_CUDA(cudaGetDeviceProperties(&p, opt.device));
  GpuBenchResult r;
  r.device = p.name;
  r.sm_major = p.major;
  r.sm_minor = p.minor;
  r.sms = p.multiProcessorCount;
  r.gpus = count;
  r.memory_bytes = static_cast<int64_t>(p.totalGlobalMem);
  r.l2_bytes = p.l2CacheSize;
  r.quick = opt.quick;
  int drv = 0, rt = 0;
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  r.driver = fmt::format("{}.{}", drv / 1000, (drv % 1000) / 10);
  r.runtime = fmt::format("{}.{}", rt / 1000, (rt % 1000) / 10);
  if (p.major < 8)
    return Error{
        fmt::format("{} is sm_{}{}: bench gpu needs sm_80 or newer (bf16 tensor cores)", p.name, p.major, p.minor)};
  cudaStream_t s = nullptr;
  GPUB_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  BenchContext ctx;
  ctx.opt = &opt;
  ctx.device = opt.device;
  ctx.sm_major = p.major;
  ctx.sm_minor = p.minor;
  ctx.l2_bytes = p.l2CacheSize;
  ctx.stream = s;
  // A part that stops on an error is reported with what it measured so far, and the next part still
  // runs: one failure must not cost the whole run (after a sticky fault the next parts fail fast).
  struct Part {
    bool on;
    const char* name;
    Status (*run)(const BenchContext&, GpuBenchResult&);
  };
  for (const Part& part :
       {Part{opt.gemm, "gemm", runGemmBench}, Part{opt.bandwidth, "bandwidth", runBandwidthBench},
        Part{opt.attention, "attention", runAttentionBench}, Part{opt.fusion, "fusion", runFusionBench}}) {
    if (!part.on) continue;
    Status st = part.run(ctx, r);
    if (!st.ok()) {
      r.errors.push_back(std::string(part.name) + " stopped: " + st.message());
      ctx.say(r.errors.back());
      cudaGetLastError();  // clear a non-sticky error so the next part starts clean
    }
  }
  cudaStreamDestroy(s);
  return r;
}

}  // namespace gpudoctor
