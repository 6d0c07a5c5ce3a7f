// Attention forward at training shapes (16384 tokens per batch, 2048 hidden), sequence 512 to 16k:
// unfused (cuBLASLt batched GEMM -> scores in memory -> softmax kernel -> GEMM, PyTorch's math path)
// against this project's flash-style kernel (flash_attention.cu). Each is checked against an FP64
// host softmax(QK^T/sqrt(d))V on sampled rows of two heads, fresh inputs per check, output poisoned.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <random>

#include <fmt/format.h>

#include "gpu/bench/device_util.h"
#include "gpu/bench/flash_attention.cuh"
#include "gpu/bench/gpu_bench.h"
#include "gpu/bench/lt_gemm.h"

namespace gpudoctor::gpubench {

namespace {

constexpr size_t kWorkspaceBytes = 32u << 20;
constexpr int64_t kTokens = 16384;  // batch x seq
constexpr int64_t kHidden = 2048;   // heads x head_dim

__device__ __forceinline__ float blockReduce(float v, bool is_max, float* shared) {
  for (int o = 16; o > 0; o >>= 1) {
    float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, w) : v + w;
  }
  int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  __syncthreads();  // shared is reused between calls
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  int warps = blockDim.x >> 5;
  v = lane < warps ? shared[lane] : (is_max ? -INFINITY : 0.f);
  for (int o = 16; o > 0; o >>= 1) {
    float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, w) : v + w;
  }
  return v;
}

// In-place row softmax of the bf16 scores (already scaled by the GEMM), fp32 math; causal rows
// write zeros past the diagonal so every element of P is written. 8 bf16 per access.
__global__ void __launch_bounds__(256) softmaxRows(__nv_bfloat16* s, int seq, bool causal) {
  __shared__ float red[32];
  size_t row = blockIdx.x;
  int qi = static_cast<int>(row % seq);
  uint4* p = reinterpret_cast<uint4*>(s + row * seq);
  int valid = causal ? qi + 1 : seq;
  float mx = -INFINITY;
  for (int c = threadIdx.x; c < seq / 8; c += blockDim.x) {
    uint4 u = p[c];
    const __nv_bfloat16* e = reinterpret_cast<const __nv_bfloat16*>(&u);
#pragma unroll
    for (int i = 0; i < 8; ++i)
      if (c * 8 + i < valid) mx = fmaxf(mx, __bfloat162float(e[i]));
  }
  mx = blockReduce(mx, true, red);
  float sum = 0;
  for (int c = threadIdx.x; c < seq / 8; c += blockDim.x) {
    uint4 u = p[c];
    const __nv_bfloat16* e = reinterpret_cast<const __nv_bfloat16*>(&u);
#pragma unroll
    for (int i = 0; i < 8; ++i)
      if (c * 8 + i < valid) sum += __expf(__bfloat162float(e[i]) - mx);
  }
  sum = blockReduce(sum, false, red);
  float inv = 1.f / sum;
  for (int c = threadIdx.x; c < seq / 8; c += blockDim.x) {
    uint4 u = p[c];
    __nv_bfloat16* e = reinterpret_cast<__nv_bfloat16*>(&u);
#pragma unroll
    for (int i = 0; i < 8; ++i)
      e[i] = __float2bfloat16_rn(c * 8 + i < valid ? __expf(__bfloat162float(e[i]) - mx) * inv : 0.f);
    p[c] = u;
  }
}

struct Config {
  int64_t batch, heads, seq, d;
  bool causal;
};

Status launchFused(const Config& c, FlashVariant variant, const __nv_bfloat16* q, const __nv_bfloat16* k,
                   const __nv_bfloat16* v, __nv_bfloat16* o, cudaStream_t s) {
  return cudaCheck(launchFlashAttention(q, k, v, o, static_cast<int>(c.batch * c.heads), static_cast<int>(c.seq),
                                        static_cast<int>(c.d), c.causal, variant, s),
                   "flash attention kernel");
}

// FP64 reference on 16 sampled rows of the first and the last head. scores_in_bf16: the implementation
// rounds the scaled scores to bf16 before the softmax (the unfused path, like PyTorch's math path in
// bf16); that moves each p_j by up to 2^-8·|s_j| relative, so those elements also get
// 2^-7·Σ_j p_j·|s_j|·|v_j| (the first-order worst case, with a factor 2 of margin).
Result<CheckFigure> checkAttention(const Config& c, const void* q, const void* k, const void* v, const void* o,
                                   bool scores_in_bf16, cudaStream_t s) {
  CheckFigure fig;
  size_t per_head = static_cast<size_t>(c.seq * c.d);
  size_t heads = static_cast<size_t>(c.batch * c.heads);
  auto bad = countNonFinite(o, NumFormat::kBf16, heads * per_head, s);
  if (!bad.ok()) return bad.error();
  fig.unwritten = bad.value();
  std::mt19937_64 rng(freshSeed());
  double scale = 1.0 / std::sqrt(static_cast<double>(c.d));
  struct Pair {
    double out, ref, extra;
  };
  std::vector<Pair> pairs;
  for (size_t h : {size_t{0}, heads - 1}) {
    auto kh = toHost(k, NumFormat::kBf16, h * per_head, per_head);
    auto vh = toHost(v, NumFormat::kBf16, h * per_head, per_head);
    auto qh = toHost(q, NumFormat::kBf16, h * per_head, per_head);
    auto oh = toHost(o, NumFormat::kBf16, h * per_head, per_head);
    if (!kh.ok() || !vh.ok() || !qh.ok() || !oh.ok()) return Error{"copying attention tensors to the host failed"};
    std::vector<double> kd(per_head), vd(per_head);
    for (size_t i = 0; i < per_head; ++i) {
      kd[i] = decodeElement(NumFormat::kBf16, kh.value().data(), i);
      vd[i] = decodeElement(NumFormat::kBf16, vh.value().data(), i);
    }
    std::vector<double> p(static_cast<size_t>(c.seq)), score(static_cast<size_t>(c.seq)), ref(static_cast<size_t>(c.d)),
        extra(static_cast<size_t>(c.d));
    for (int r = 0; r < 16; ++r) {
      int64_t row = r == 0 ? 0 : r == 1 ? c.seq - 1 : static_cast<int64_t>(rng() % c.seq);
      int64_t valid = c.causal ? row + 1 : c.seq;
      std::vector<double> qrow(static_cast<size_t>(c.d));
      for (int64_t l = 0; l < c.d; ++l) qrow[l] = decodeElement(NumFormat::kBf16, qh.value().data(), row * c.d + l);
      double mx = -INFINITY;
      for (int64_t j = 0; j < valid; ++j) {
        double dot = 0;
        for (int64_t l = 0; l < c.d; ++l) dot += qrow[l] * kd[j * c.d + l];
        p[j] = score[j] = dot * scale;
        mx = std::max(mx, p[j]);
      }
      double sum = 0;
      for (int64_t j = 0; j < valid; ++j) sum += (p[j] = std::exp(p[j] - mx));
      std::fill(ref.begin(), ref.end(), 0.0);
      std::fill(extra.begin(), extra.end(), 0.0);
      for (int64_t j = 0; j < valid; ++j)
        for (int64_t l = 0; l < c.d; ++l) {
          ref[l] += p[j] / sum * vd[j * c.d + l];
          extra[l] += p[j] / sum * std::fabs(score[j] * vd[j * c.d + l]);
        }
      for (int64_t l = 0; l < c.d; ++l)
        pairs.push_back({decodeElement(NumFormat::kBf16, oh.value().data(), row * c.d + l), ref[l],
                         scores_in_bf16 ? std::ldexp(extra[l], -7) : 0.0});
    }
  }
  double ss = 0;
  for (const auto& pr : pairs) ss += pr.ref * pr.ref;
  double rms = std::sqrt(ss / static_cast<double>(pairs.size()));
  ErrorStats es;
  for (const auto& pr : pairs) addError(es, pr.out, pr.ref, attentionBound(pr.ref, rms) + pr.extra);
  fig.checked = es.checked;
  fig.rel_l2 = es.relL2();
  fig.worst_ratio = es.worst_ratio;
  fig.passed = es.passed() && fig.unwritten == 0;
  fig.note = "FP64 host reference on 16 sampled rows of the first and last head; whole output scanned for poison; " +
             es.summary();
  return fig;
}

}  // namespace

Status runAttentionBench(const BenchContext& ctx, GpuBenchResult& out) {
  auto s = static_cast<cudaStream_t>(ctx.stream);
  std::vector<Config> configs;
  std::vector<int64_t> seqs =
      ctx.opt->quick ? std::vector<int64_t>{512, 2048} : std::vector<int64_t>{512, 1024, 2048, 4096, 8192, 16384};
  if (ctx.tiny()) {
    seqs.clear();
    configs = {{1, 2, 128, 64, false}, {1, 2, 128, 64, true}, {2, 2, 256, 128, false}, {2, 2, 256, 128, true}};
  }
  for (int64_t seq : seqs) {
    configs.push_back({kTokens / seq, kHidden / 128, seq, 128, false});
    if (!ctx.opt->quick) {
      configs.push_back({kTokens / seq, kHidden / 128, seq, 128, true});
      configs.push_back({kTokens / seq, kHidden / 64, seq, 64, false});
    }
  }
  auto lt = cublasLt();
  if (!lt.ok()) out.notes.push_back("unfused attention skipped: " + lt.error().message);
  DeviceBuffer ws;
  GPUB_TRY(ws.alloc(kWorkspaceBytes));
  int reps = ctx.tiny() ? ctx.reps() : 20;
  for (const Config& c : configs) {
    size_t bh = static_cast<size_t>(c.batch * c.heads);
    size_t elems = bh * static_cast<size_t>(c.seq * c.d);
    size_t tensor_bytes = elems * 2;
    const int sets = 2;  // each set (Q, K, V) is over 100 MB: twice the L2 of any current GPU
    std::vector<DeviceBuffer> qs(sets), ks(sets), vs(sets);
    DeviceBuffer o;
    for (int i = 0; i < sets; ++i) {
      GPUB_TRY(qs[i].alloc(tensor_bytes));
      GPUB_TRY(ks[i].alloc(tensor_bytes));
      GPUB_TRY(vs[i].alloc(tensor_bytes));
    }
    GPUB_TRY(o.alloc(tensor_bytes));
    auto fresh = [&] {
      for (int i = 0; i < sets; ++i) {
        fillUniform(qs[i].get(), NumFormat::kBf16, elems, freshSeed(), 2.f, s);  // |scores| up to a few units
        fillUniform(ks[i].get(), NumFormat::kBf16, elems, freshSeed(), 2.f, s);
        fillUniform(vs[i].get(), NumFormat::kBf16, elems, freshSeed(), 1.f, s);
      }
      poison(o.get(), NumFormat::kBf16, elems, s);
    };
    double flops = 4.0 * static_cast<double>(bh) * c.seq * c.seq * c.d * (c.causal ? 0.5 : 1.0);
    auto record = [&](const std::string& impl, const std::vector<double>& us, CheckFigure chk, int64_t mem) {
      AttentionFigure f;
      f.impl = impl;
      f.batch = c.batch, f.heads = c.heads, f.seq = c.seq, f.head_dim = c.d, f.causal = c.causal;
      f.reps = static_cast<int>(us.size());
      f.median_us = median(us);
      f.tflops = f.median_us > 0 ? flops / (f.median_us * 1e-6) / 1e12 : 0;
      f.memory_bytes = mem;
      f.check = std::move(chk);
      out.attention.push_back(f);
    };
    std::string label = fmt::format("seq {} d {}{}", c.seq, c.d, c.causal ? " causal" : "");
    // Unfused: S = scale·Q·K^T (bf16, in memory), P = softmax(S) in place, O = P·V.
    if (lt.ok()) {
      ctx.say("attention unfused " + label);
      size_t s_bytes = bh * static_cast<size_t>(c.seq * c.seq) * 2;
      DeviceBuffer sbuf;
      Status alloc = sbuf.alloc(s_bytes);
      if (!alloc.ok()) {
        out.notes.push_back("unfused attention " + label + " skipped: " + alloc.message());
      } else {
        // S = K^T·Q per head (A = K, B = Q), then O = V·P (A = V, B = P): see lt_gemm.h.
        LtGemmSpec g1 = attentionScoresSpec(static_cast<int64_t>(bh), c.seq, c.d);
        LtGemmSpec g2 = attentionOutputSpec(static_cast<int64_t>(bh), c.seq, c.d);
        auto p1 = LtGemm::plan(g1, kWorkspaceBytes);
        auto p2 = LtGemm::plan(g2, kWorkspaceBytes);
        if (!p1.ok() || !p2.ok()) {
          out.notes.push_back("unfused attention " + label +
                              " skipped: " + (p1.ok() ? p2.error().message : p1.error().message));
        } else {
          auto figure = [&]() -> Status {
            float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(c.d)));
            auto run = [&](int set) -> Status {
              auto* sp = sbuf.get<__nv_bfloat16>();
              GPUB_TRY(p1.value()->run(ks[set].get(), qs[set].get(), sp, scale, ws.get(), s));
              // One block per row, 8 scores per thread (short rows would leave most of 256 threads idle).
              int threads = static_cast<int>(std::min<int64_t>(256, std::max<int64_t>(32, c.seq / 8)));
              softmaxRows<<<static_cast<unsigned>(bh * c.seq), threads, 0, s>>>(sp, static_cast<int>(c.seq), c.causal);
              GPUB_CUDA(cudaGetLastError());
              return p2.value()->run(vs[set].get(), sp, o.get(), 1.f, ws.get(), s);
            };
            fresh();
            poison(sbuf.get(), NumFormat::kBf16, s_bytes / 2, s);
            GPUB_TRY(run(0));
            GPUB_CUDA(cudaStreamSynchronize(s));
            auto chk = checkAttention(c, qs[0].get(), ks[0].get(), vs[0].get(), o.get(), /*scores_in_bf16=*/true, s);
            if (!chk.ok()) return Error{chk.error().message};
            auto us = timeReps([&](int rep) { return run(rep % sets); }, 3, reps, s);
            if (!us.ok()) return Error{us.error().message};
            record("unfused", us.value(), chk.value(),
                   static_cast<int64_t>(4 * tensor_bytes + s_bytes + kWorkspaceBytes));
            return {};
          };
          GPUB_TRY(figureFailed(figure(), "attention unfused " + label, out.errors));
        }
      }
    }
    // This project's kernel in two builds of the same algorithm: "fused" (cp.async double buffering,
    // ldmatrix) and "fused-simple" (synchronous tile loads); each checked on its own fresh inputs.
    for (auto [impl, variant] :
         {std::pair{"fused", FlashVariant::kPipelined}, std::pair{"fused-simple", FlashVariant::kSimple}}) {
      auto figure = [&, impl = impl, variant = variant]() -> Status {
        ctx.say(std::string("attention ") + impl + " " + label);
        fresh();
        GPUB_TRY(launchFused(c, variant, qs[0].get<__nv_bfloat16>(), ks[0].get<__nv_bfloat16>(),
                             vs[0].get<__nv_bfloat16>(), o.get<__nv_bfloat16>(), s));
        GPUB_CUDA(cudaStreamSynchronize(s));
        auto chk = checkAttention(c, qs[0].get(), ks[0].get(), vs[0].get(), o.get(), /*scores_in_bf16=*/false, s);
        if (!chk.ok()) return Error{chk.error().message};
        auto us = timeReps(
            [&](int rep) {
              int set = rep % sets;
              return launchFused(c, variant, qs[set].get<__nv_bfloat16>(), ks[set].get<__nv_bfloat16>(),
                                 vs[set].get<__nv_bfloat16>(), o.get<__nv_bfloat16>(), s);
            },
            3, reps, s);
        if (!us.ok()) return Error{us.error().message};
        record(impl, us.value(), chk.value(), static_cast<int64_t>(4 * tensor_bytes));
        return {};
      };
      GPUB_TRY(figureFailed(figure(), std::string("attention ") + impl + " " + label, out.errors));
    }
  }
  out.notes.push_back(
      "cuDNN fused attention is measured through PyTorch (scripts/device/torch_gpu_bench.py, "
      "SDPBackend.CUDNN_ATTENTION) on "
      "the same shapes");
  return {};
}

}  // namespace gpudoctor::gpubench
