// Operator fusion and launch overhead: bias + GeLU + scale + residual as four kernels (PyTorch
// eager) against one fused kernel, on a large tensor (memory bound: 4 round trips against 1) and a
// small one (launch bound); empty-kernel launch cost; the small chain captured in a CUDA graph.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <random>

#include <fmt/format.h>

#include "gpu/bench/device_util.h"
#include "gpu/bench/gpu_bench.h"

namespace gpudoctor::gpubench {

namespace {

enum Op { kBias, kGelu, kScale, kResidual, kFused };
constexpr float kScaleFactor = 0.5f;

__device__ __forceinline__ float gelu(float x) { return 0.5f * x * (1.f + erff(x * 0.70710678118654752f)); }

// out = op(a[, bias][, b]) on 8 bf16 per thread; bias has h8 vectors and repeats along a row.
template <int OP>
__global__ void elementwise(const uint4* __restrict__ a, const uint4* __restrict__ bias, const uint4* __restrict__ b,
                            uint4* __restrict__ out, size_t n8, int h8, float scale) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n8;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    uint4 va = a[i], vb{}, vr{};
    if (OP == kBias || OP == kFused) vb = bias[i % h8];
    if (OP == kResidual) vr = b[i];
    if (OP == kFused) vr = b[i];
    const __nv_bfloat16* ea = reinterpret_cast<const __nv_bfloat16*>(&va);
    const __nv_bfloat16* eb = reinterpret_cast<const __nv_bfloat16*>(&vb);
    const __nv_bfloat16* er = reinterpret_cast<const __nv_bfloat16*>(&vr);
    uint4 res;
    __nv_bfloat16* eo = reinterpret_cast<__nv_bfloat16*>(&res);
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      float x = __bfloat162float(ea[e]);
      float y;
      if (OP == kBias)
        y = x + __bfloat162float(eb[e]);
      else if (OP == kGelu)
        y = gelu(x);
      else if (OP == kScale)
        y = x * scale;
      else if (OP == kResidual)
        y = x + __bfloat162float(er[e]);
      else
        y = gelu(x + __bfloat162float(eb[e])) * scale + __bfloat162float(er[e]);
      eo[e] = __float2bfloat16_rn(y);
    }
    out[i] = res;
  }
}

__global__ void emptyKernel(int* flag, int value) {
  if (threadIdx.x == 0 && blockIdx.x == 0) *flag = value;
}

struct Tensors {
  DeviceBuffer x[2], r[2], bias, t1, t2, t3, y;
  size_t n = 0;
  int hidden = 0;
};

Status allocTensors(Tensors& t, size_t tokens, int hidden, cudaStream_t s) {
  t.n = tokens * hidden;
  t.hidden = hidden;
  size_t b = t.n * 2;
  for (int i = 0; i < 2; ++i) {
    GPUB_TRY(t.x[i].alloc(b));
    GPUB_TRY(t.r[i].alloc(b));
  }
  GPUB_TRY(t.bias.alloc(static_cast<size_t>(hidden) * 2));
  for (DeviceBuffer* d : {&t.t1, &t.t2, &t.t3, &t.y}) GPUB_TRY(d->alloc(b));
  return {};
}

void fresh(Tensors& t, cudaStream_t s) {
  for (int i = 0; i < 2; ++i) {
    fillUniform(t.x[i].get(), NumFormat::kBf16, t.n, freshSeed(), 2.f, s);
    fillUniform(t.r[i].get(), NumFormat::kBf16, t.n, freshSeed(), 1.f, s);
  }
  fillUniform(t.bias.get(), NumFormat::kBf16, static_cast<size_t>(t.hidden), freshSeed(), 1.f, s);
  for (DeviceBuffer* d : {&t.t1, &t.t2, &t.t3, &t.y}) poison(d->get(), NumFormat::kBf16, t.n, s);
}

int gridFor(size_t n8) { return static_cast<int>(std::min<size_t>((n8 + 255) / 256, 132 * 8)); }

Status separate(Tensors& t, int set, cudaStream_t s) {
  size_t n8 = t.n / 8;
  int h8 = t.hidden / 8, g = gridFor(n8);
  auto* bias = t.bias.get<uint4>();
  elementwise<kBias><<<g, 256, 0, s>>>(t.x[set].get<uint4>(), bias, nullptr, t.t1.get<uint4>(), n8, h8, 0);
  elementwise<kGelu><<<g, 256, 0, s>>>(t.t1.get<uint4>(), nullptr, nullptr, t.t2.get<uint4>(), n8, h8, 0);
  elementwise<kScale><<<g, 256, 0, s>>>(t.t2.get<uint4>(), nullptr, nullptr, t.t3.get<uint4>(), n8, h8, kScaleFactor);
  elementwise<kResidual>
      <<<g, 256, 0, s>>>(t.t3.get<uint4>(), nullptr, t.r[set].get<uint4>(), t.y.get<uint4>(), n8, h8, 0);
  return cudaCheck(cudaGetLastError(), "elementwise kernels");
}

Status fused(Tensors& t, int set, cudaStream_t s) {
  size_t n8 = t.n / 8;
  elementwise<kFused><<<gridFor(n8), 256, 0, s>>>(t.x[set].get<uint4>(), t.bias.get<uint4>(), t.r[set].get<uint4>(),
                                                  t.y.get<uint4>(), n8, t.hidden / 8, kScaleFactor);
  return cudaCheck(cudaGetLastError(), "fused elementwise kernel");
}

// y against an FP64 host reference on four windows (first, last, two random) of set 0.
Result<CheckFigure> checkChain(Tensors& t, cudaStream_t s) {
  CheckFigure c;
  auto bad = countNonFinite(t.y.get(), NumFormat::kBf16, t.n, s);
  if (!bad.ok()) return bad.error();
  c.unwritten = bad.value();
  size_t win = std::min<size_t>(t.n, 8192);
  std::mt19937_64 rng(freshSeed());
  auto bias = toHost(t.bias.get(), NumFormat::kBf16, 0, static_cast<size_t>(t.hidden));
  if (!bias.ok()) return bias.error();
  ErrorStats es;
  for (size_t start :
       {size_t{0}, t.n - win, (rng() % (t.n - win + 1)) & ~size_t{7}, (rng() % (t.n - win + 1)) & ~size_t{7}}) {
    auto x = toHost(t.x[0].get(), NumFormat::kBf16, start, win);
    auto r = toHost(t.r[0].get(), NumFormat::kBf16, start, win);
    auto y = toHost(t.y.get(), NumFormat::kBf16, start, win);
    if (!x.ok() || !r.ok() || !y.ok()) return Error{"copying elementwise tensors to the host failed"};
    for (size_t i = 0; i < win; ++i) {
      double a = decodeElement(NumFormat::kBf16, x.value().data(), i) +
                 decodeElement(NumFormat::kBf16, bias.value().data(), (start + i) % t.hidden);
      double rr = decodeElement(NumFormat::kBf16, r.value().data(), i);
      double ref = 0.5 * a * (1 + std::erf(a / std::sqrt(2.0))) * kScaleFactor + rr;
      // Four bf16 roundings in the separate chain (at most 2^-8 each, relative to the terms they touch).
      double bound = std::ldexp(1.0, -6) * (std::fabs(a) * kScaleFactor + std::fabs(rr)) + 1e-6;
      addError(es, decodeElement(NumFormat::kBf16, y.value().data(), i), ref, bound);
    }
  }
  c.checked = es.checked;
  c.rel_l2 = es.relL2();
  c.worst_ratio = es.worst_ratio;
  c.passed = es.passed() && c.unwritten == 0;
  c.note = "FP64 host reference on four windows; whole output scanned for poison; " + es.summary();
  return c;
}

FusionFigure figure(const std::string& name, size_t elements, int kernels, const std::vector<double>& us,
                    CheckFigure chk) {
  FusionFigure f;
  f.name = name;
  f.elements = static_cast<int64_t>(elements);
  f.kernels = kernels;
  f.reps = static_cast<int>(us.size());
  f.median_us = median(us);
  f.per_kernel_us = kernels > 0 ? f.median_us / kernels : 0;
  f.check = std::move(chk);
  return f;
}

}  // namespace

Status runFusionBench(const BenchContext& ctx, GpuBenchResult& out) {
  auto s = static_cast<cudaStream_t>(ctx.stream);
  int reps = ctx.reps();
  // Large: 16384 tokens x 8192 hidden (256 MiB per bf16 tensor; two input sets rotate).
  {
    Tensors t;
    GPUB_TRY(allocTensors(t, ctx.tiny() ? 256 : ctx.opt->quick ? 4096 : 16384, ctx.tiny() ? 1024 : 8192, s));
    for (bool fuse : {false, true}) {
      std::string name = fuse ? "elementwise fused" : "elementwise separate";
      ctx.say("fusion " + name);
      fresh(t, s);
      GPUB_TRY(fuse ? fused(t, 0, s) : separate(t, 0, s));
      GPUB_CUDA(cudaStreamSynchronize(s));
      auto chk = checkChain(t, s);
      if (!chk.ok()) return Error{chk.error().message};
      auto us = timeReps([&](int rep) { return fuse ? fused(t, rep % 2, s) : separate(t, rep % 2, s); }, 3, reps, s);
      if (!us.ok()) return Error{us.error().message};
      out.fusion.push_back(figure(name, t.n, fuse ? 1 : 4, us.value(), chk.value()));
    }
  }
  // Small: 64 tokens x 1024 hidden, 50 chains per repetition: launch bound.
  constexpr int kChains = 50;
  {
    Tensors t;
    GPUB_TRY(allocTensors(t, 64, 1024, s));
    for (int mode = 0; mode < 3; ++mode) {
      const char* names[] = {"small separate", "small fused", "small separate graph"};
      ctx.say(std::string("fusion ") + names[mode]);
      cudaGraphExec_t exec = nullptr;
      if (mode == 2) {
        // The same 200 launches recorded once and replayed as one graph launch.
        cudaGraph_t graph = nullptr;
        GPUB_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        Status cap;
        for (int i = 0; i < kChains && cap.ok(); ++i) cap = separate(t, 0, s);
        cudaError_t end = cudaStreamEndCapture(s, &graph);
        GPUB_TRY(cap);
        GPUB_CUDA(end);
        cudaError_t inst = cudaGraphInstantiate(&exec, graph, 0);
        cudaGraphDestroy(graph);
        GPUB_CUDA(inst);
      }
      auto once = [&](int set) -> Status {
        if (mode == 2) return cudaCheck(cudaGraphLaunch(exec, s), "cudaGraphLaunch");
        for (int i = 0; i < kChains; ++i) GPUB_TRY(mode == 1 ? fused(t, set, s) : separate(t, set, s));
        return {};
      };
      fresh(t, s);
      Status st = once(0);
      if (st.ok()) st = cudaCheck(cudaStreamSynchronize(s), "small chain");
      Result<CheckFigure> chk = st.ok() ? checkChain(t, s) : Result<CheckFigure>(Error{st.message()});
      // The graph replays set 0 (its pointers are fixed); the others rotate like every figure.
      Result<std::vector<double>> us =
          chk.ok() ? timeReps([&](int rep) { return once(mode == 2 ? 0 : rep % 2); }, 3, reps, s)
                   : Result<std::vector<double>>(chk.error());
      if (exec) cudaGraphExecDestroy(exec);
      if (!us.ok()) return Error{us.error().message};
      out.fusion.push_back(figure(names[mode], t.n, mode == 1 ? kChains : 4 * kChains, us.value(), chk.value()));
    }
  }
  // Launch overhead: 1000 empty kernels back to back (GPU time per kernel), and the host's cost per launch call.
  {
    ctx.say("fusion launch overhead");
    constexpr int kLaunches = 1000;
    DeviceBuffer flag;
    GPUB_TRY(flag.alloc(sizeof(int)));
    GPUB_CUDA(cudaMemsetAsync(flag.get(), 0xff, sizeof(int), s));
    std::vector<double> host_us;
    auto us = timeReps(
        [&](int rep) {
          auto t0 = std::chrono::steady_clock::now();
          for (int i = 0; i < kLaunches; ++i) emptyKernel<<<1, 32, 0, s>>>(flag.get<int>(), rep * kLaunches + i);
          host_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
          return cudaCheck(cudaGetLastError(), "empty kernel");
        },
        3, reps, s);
    if (!us.ok()) return Error{us.error().message};
    int last = 0;
    GPUB_CUDA(cudaMemcpy(&last, flag.get(), sizeof last, cudaMemcpyDeviceToHost));
    int want = (3 + reps - 1) * kLaunches + kLaunches - 1;
    CheckFigure c;
    c.checked = 1;
    c.passed = last == want;
    c.unwritten = c.passed ? 0 : 1;
    c.note = fmt::format("the last launch's value reached memory ({} vs {})", last, want);
    out.fusion.push_back(figure("launch empty (GPU)", 0, kLaunches, us.value(), c));
    std::vector<double> timed(host_us.begin() + 3, host_us.end());
    out.fusion.push_back(figure("launch call (host)", 0, kLaunches, timed, c));
  }
  return {};
}

}  // namespace gpudoctor::gpubench
