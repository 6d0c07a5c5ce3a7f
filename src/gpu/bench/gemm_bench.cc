// GEMM throughput per precision through cuBLASLt at training-typical shapes: FP32 (SIMT), TF32,
// FP16, BF16 (fp32 accumulation) and FP8 e4m3 (sm_89+, bf16 output, scale pointers). Layout TN
// (what FP8 requires on Hopper; the same for all so the precisions compare like for like).
#include <cuda_runtime.h>

#include <cmath>
#include <random>

#include <fmt/format.h>

#include "gpu/bench/device_util.h"
#include "gpu/bench/gpu_bench.h"
#include "gpu/bench/lt_gemm.h"

namespace gpudoctor::gpubench {

namespace {

constexpr size_t kWorkspaceBytes = 32u << 20;

struct PrecSetup {
  GemmPrecision p;
  NumFormat in, out;
  cudaDataType_t in_type, out_type;
  cublasComputeType_t compute;
};

PrecSetup setupFor(GemmPrecision p) {
  switch (p) {
    case GemmPrecision::kFp32:
      return {p, NumFormat::kFp32, NumFormat::kFp32, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case GemmPrecision::kTf32:
      return {p, NumFormat::kFp32, NumFormat::kFp32, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32};
    case GemmPrecision::kFp16:
      return {p, NumFormat::kFp16, NumFormat::kFp16, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F};
    case GemmPrecision::kBf16:
      return {p, NumFormat::kBf16, NumFormat::kBf16, CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F};
    case GemmPrecision::kFp8:
      return {p, NumFormat::kFp8E4M3, NumFormat::kBf16, CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F};
  }
  return {};
}

// Compares 16 x 16 sampled outputs (rows of A, columns of B) with an FP64 host reference.
Result<CheckFigure> checkGemm(const PrecSetup& ps, int64_t m, int64_t n, int64_t k, const void* a, const void* b,
                              const void* d, cudaStream_t s) {
  CheckFigure c;
  auto bad = countNonFinite(d, ps.out, static_cast<size_t>(m * n), s);
  if (!bad.ok()) return bad.error();
  c.unwritten = bad.value();
  std::mt19937_64 rng(freshSeed());
  std::vector<int64_t> rows, cols;
  for (int i = 0; i < 16; ++i) {
    rows.push_back(i == 0 ? 0 : i == 1 ? m - 1 : static_cast<int64_t>(rng() % m));
    cols.push_back(i == 0 ? 0 : i == 1 ? n - 1 : static_cast<int64_t>(rng() % n));
  }
  GemmTolerance tol = gemmTolerance(ps.in, ps.p == GemmPrecision::kTf32, ps.out, k);
  ErrorStats es;
  std::vector<std::vector<uint8_t>> arows;
  for (int64_t i : rows) {
    auto arow = toHost(a, ps.in, static_cast<size_t>(i * k), static_cast<size_t>(k));  // A stored k x m (op T)
    if (!arow.ok()) return arow.error();
    arows.push_back(std::move(arow.value()));
  }
  for (int64_t j : cols) {
    auto bcol = toHost(b, ps.in, static_cast<size_t>(j * k), static_cast<size_t>(k));   // B stored k x n
    auto dcol = toHost(d, ps.out, static_cast<size_t>(j * m), static_cast<size_t>(m));  // D stored m x n
    if (!bcol.ok()) return bcol.error();
    if (!dcol.ok()) return dcol.error();
    for (size_t r = 0; r < rows.size(); ++r) {
      int64_t i = rows[r];
      double ref = 0, absdot = 0;
      for (int64_t l = 0; l < k; ++l) {
        double x = decodeElement(ps.in, arows[r].data(), l) * decodeElement(ps.in, bcol.value().data(), l);
        ref += x;
        absdot += std::fabs(x);
      }
      addError(es, decodeElement(ps.out, dcol.value().data(), i), ref, gemmBound(tol, ref, absdot));
    }
  }
  c.checked = es.checked;
  c.rel_l2 = es.relL2();
  c.worst_ratio = es.worst_ratio;
  c.passed = es.passed() && c.unwritten == 0;
  c.note =
      fmt::format("FP64 host reference on 16x16 sampled outputs; whole output scanned for poison; {}", es.summary());
  return c;
}

}  // namespace

Status runGemmBench(const BenchContext& ctx, GpuBenchResult& out) {
  auto lt = cublasLt();
  if (!lt.ok()) {
    out.notes.push_back("GEMM skipped: " + lt.error().message);
    return {};
  }
  auto s = static_cast<cudaStream_t>(ctx.stream);
  struct Shape {
    int64_t m, n, k;
  };
  std::vector<Shape> shapes = {{4096, 4096, 4096}};
  // Square 8192 (a large projection), and an LLM MLP up-projection: 16384 tokens, 4096 -> 14336.
  if (ctx.tiny())
    shapes = {{256, 192, 512}};
  else if (!ctx.opt->quick)
    shapes = {{4096, 4096, 4096}, {8192, 8192, 8192}, {14336, 16384, 4096}};
  std::vector<GemmPrecision> precs = {GemmPrecision::kFp32, GemmPrecision::kTf32, GemmPrecision::kFp16,
                                      GemmPrecision::kBf16};
  bool fp8 = ctx.sm_major * 10 + ctx.sm_minor >= 89;
  if (fp8)
    precs.push_back(GemmPrecision::kFp8);
  else
    out.notes.push_back("FP8 GEMM skipped: needs sm_89 or newer");
  DeviceBuffer ws, scales;
  GPUB_TRY(ws.alloc(kWorkspaceBytes));
  // Each scale on its own 256-byte boundary, as cudaMalloc would place it: with B's scale 4 bytes after
  // A's, cublasLtMatmul refused every FP8 GEMM (NOT_SUPPORTED) on H200 with cuBLASLt 13.0, though the
  // heuristic had offered an algorithm.
  constexpr int kScaleStride = 64;
  GPUB_TRY(scales.alloc(2 * kScaleStride * sizeof(float)));
  std::vector<float> ones(2 * kScaleStride, 1.f);
  GPUB_CUDA(cudaMemcpy(scales.get(), ones.data(), ones.size() * sizeof(float), cudaMemcpyHostToDevice));
  for (const auto& sh : shapes)
    for (GemmPrecision p : precs) {
      PrecSetup ps = setupFor(p);
      ctx.say(fmt::format("gemm {} {}x{}x{}", gemmPrecisionName(p), sh.m, sh.n, sh.k));
      LtGemmSpec spec = tnGemmSpec(sh.m, sh.n, sh.k);
      spec.a_type = spec.b_type = ps.in_type;
      spec.d_type = ps.out_type;
      spec.compute = ps.compute;
      if (p == GemmPrecision::kFp8) {
        spec.a_scale = scales.get<float>();
        spec.b_scale = scales.get<float>() + kScaleStride;
      }
      auto plan = LtGemm::plan(spec, kWorkspaceBytes);
      if (!plan.ok()) {
        out.notes.push_back(
            fmt::format("GEMM {} {}x{}x{} skipped: {}", gemmPrecisionName(p), sh.m, sh.n, sh.k, plan.error().message));
        continue;
      }
      auto figure = [&]() -> Status {
        size_t in_b = static_cast<size_t>(formatBytes(ps.in));
        size_t a_elems = static_cast<size_t>(sh.m * sh.k), b_elems = static_cast<size_t>(sh.n * sh.k);
        size_t d_elems = static_cast<size_t>(sh.m * sh.n);
        int sets = rotationSets((a_elems + b_elems) * in_b, ctx.l2_bytes, 4);
        std::vector<DeviceBuffer> as(sets), bs(sets);
        DeviceBuffer d;
        for (int i = 0; i < sets; ++i) {
          GPUB_TRY(as[i].alloc(a_elems * in_b));
          GPUB_TRY(bs[i].alloc(b_elems * in_b));
          fillUniform(as[i].get(), ps.in, a_elems, freshSeed(), 1.f, s);
          fillUniform(bs[i].get(), ps.in, b_elems, freshSeed(), 1.f, s);
        }
        GPUB_TRY(d.alloc(d_elems * formatBytes(ps.out)));
        poison(d.get(), ps.out, d_elems, s);
        GPUB_TRY(plan.value()->run(as[0].get(), bs[0].get(), d.get(), 1.f, ws.get(), s));
        GPUB_CUDA(cudaStreamSynchronize(s));
        auto chk = checkGemm(ps, sh.m, sh.n, sh.k, as[0].get(), bs[0].get(), d.get(), s);
        if (!chk.ok()) return Error{chk.error().message};
        auto us = timeReps(
            [&](int rep) {
              return plan.value()->run(as[rep % sets].get(), bs[rep % sets].get(), d.get(), 1.f, ws.get(), s);
            },
            5, ctx.reps(), s);
        if (!us.ok()) return Error{us.error().message};
        GemmFigure g;
        g.precision = p;
        g.m = sh.m, g.n = sh.n, g.k = sh.k;
        g.reps = ctx.reps();
        g.median_us = median(us.value());
        g.tflops = 2.0 * sh.m * sh.n * sh.k / (g.median_us * 1e-6) / 1e12;
        g.check = chk.value();
        out.gemm.push_back(g);
        return {};
      };
      GPUB_TRY(
          figureFailed(figure(), fmt::format("GEMM {} {}x{}x{}", gemmPrecisionName(p), sh.m, sh.n, sh.k), out.errors));
    }
  return {};
}

}  // namespace gpudoctor::gpubench
