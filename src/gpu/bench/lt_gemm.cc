#include "gpu/bench/lt_gemm.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>

namespace gpudoctor::gpubench {

namespace {

Result<const CublasLtApi*> loadOnce() {
  static CublasLtApi api;
  const char* env = std::getenv("GPUDOCTOR_CUBLASLT_LIBRARY");
  std::string tried;
  void* h = nullptr;
  // The loader's path first; then where CUDA 13 toolkits install when ld.so.conf does not list them.
  for (const char* name :
       {env, "libcublasLt.so.13", "/usr/local/cuda/lib64/libcublasLt.so.13",
        "/usr/local/cuda-13/lib64/libcublasLt.so.13", "/usr/local/cuda-13.0/lib64/libcublasLt.so.13"}) {
    if (!name || !*name) continue;
    h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (h) break;
    tried += std::string(tried.empty() ? "" : ", ") + name;
  }
  if (!h) return Error{"cannot load cuBLASLt (tried " + tried + "; set GPUDOCTOR_CUBLASLT_LIBRARY): " + dlerror()};
  bool ok = true;
  std::string missing;
  auto sym = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
    if (!fn) ok = false, missing = name;
  };
  sym(api.create, "cublasLtCreate");
  sym(api.destroy, "cublasLtDestroy");
  sym(api.getVersion, "cublasLtGetVersion");
  sym(api.descCreate, "cublasLtMatmulDescCreate");
  sym(api.descDestroy, "cublasLtMatmulDescDestroy");
  sym(api.descSet, "cublasLtMatmulDescSetAttribute");
  sym(api.layoutCreate, "cublasLtMatrixLayoutCreate");
  sym(api.layoutDestroy, "cublasLtMatrixLayoutDestroy");
  sym(api.layoutSet, "cublasLtMatrixLayoutSetAttribute");
  sym(api.prefCreate, "cublasLtMatmulPreferenceCreate");
  sym(api.prefDestroy, "cublasLtMatmulPreferenceDestroy");
  sym(api.prefSet, "cublasLtMatmulPreferenceSetAttribute");
  sym(api.heuristic, "cublasLtMatmulAlgoGetHeuristic");
  sym(api.matmul, "cublasLtMatmul");
  if (!ok) return Error{"cuBLASLt lacks " + missing};
  if (api.getVersion() / 10000 < 13)
    return Error{"cuBLASLt " + std::to_string(api.getVersion()) + " is older than the 13.x the build was made against"};
  if (cublasStatus_t s = api.create(&api.handle); s != CUBLAS_STATUS_SUCCESS)
    return Error{"cublasLtCreate failed with status " + std::to_string(static_cast<int>(s))};
  return &api;
}

std::string st(cublasStatus_t s) { return "cuBLASLt status " + std::to_string(static_cast<int>(s)); }

}  // namespace

Result<const CublasLtApi*> cublasLt() {
  static std::once_flag once;
  static Result<const CublasLtApi*> r = Error{"not loaded"};
  std::call_once(once, [] { r = loadOnce(); });
  return r;
}

Result<std::unique_ptr<LtGemm>> LtGemm::plan(const LtGemmSpec& p, size_t workspace_bytes) {
  auto api_r = cublasLt();
  if (!api_r.ok()) return api_r.error();
  const CublasLtApi& a = *api_r.value();
  std::unique_ptr<LtGemm> g(new LtGemm);
  g->api_ = &a;
  cublasStatus_t s;
  auto fail = [&](const char* what) { return Error{std::string(what) + ": " + st(s)}; };
  if ((s = a.descCreate(&g->desc_, p.compute, CUDA_R_32F)) != CUBLAS_STATUS_SUCCESS)
    return fail("cublasLtMatmulDescCreate");
  a.descSet(g->desc_, CUBLASLT_MATMUL_DESC_TRANSA, &p.op_a, sizeof p.op_a);
  a.descSet(g->desc_, CUBLASLT_MATMUL_DESC_TRANSB, &p.op_b, sizeof p.op_b);
  if (p.a_scale) a.descSet(g->desc_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &p.a_scale, sizeof p.a_scale);
  if (p.b_scale) a.descSet(g->desc_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &p.b_scale, sizeof p.b_scale);
  // Stored shapes: op(A) is m x k, so A is m x k (N) or k x m (T); likewise B.
  uint64_t a_rows = p.op_a == CUBLAS_OP_N ? p.m : p.k, a_cols = p.op_a == CUBLAS_OP_N ? p.k : p.m;
  uint64_t b_rows = p.op_b == CUBLAS_OP_N ? p.k : p.n, b_cols = p.op_b == CUBLAS_OP_N ? p.n : p.k;
  if ((s = a.layoutCreate(&g->la_, p.a_type, a_rows, a_cols, p.lda)) != CUBLAS_STATUS_SUCCESS) return fail("layout A");
  if ((s = a.layoutCreate(&g->lb_, p.b_type, b_rows, b_cols, p.ldb)) != CUBLAS_STATUS_SUCCESS) return fail("layout B");
  if ((s = a.layoutCreate(&g->ld_, p.d_type, p.m, p.n, p.ldd)) != CUBLAS_STATUS_SUCCESS) return fail("layout D");
  if (p.batch > 1) {
    int32_t count = p.batch;
    for (auto [l, stride] :
         {std::pair{g->la_, p.stride_a}, std::pair{g->lb_, p.stride_b}, std::pair{g->ld_, p.stride_d}}) {
      a.layoutSet(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count);
      a.layoutSet(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride);
    }
  }
  cublasLtMatmulPreference_t pref = nullptr;
  if ((s = a.prefCreate(&pref)) != CUBLAS_STATUS_SUCCESS) return fail("cublasLtMatmulPreferenceCreate");
  uint64_t ws = workspace_bytes;
  a.prefSet(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  cublasLtMatmulHeuristicResult_t h{};
  int found = 0;
  s = a.heuristic(a.handle, g->desc_, g->la_, g->lb_, g->ld_, g->ld_, pref, 1, &h, &found);
  a.prefDestroy(pref);
  if (s != CUBLAS_STATUS_SUCCESS || found == 0)
    return Error{"cuBLASLt has no algorithm for this matmul on this GPU (" + st(s) + ")"};
  g->algo_ = h.algo;
  g->workspace_ = h.workspaceSize;
  return g;
}

LtGemm::~LtGemm() {
  if (!api_) return;
  if (la_) api_->layoutDestroy(la_);
  if (lb_) api_->layoutDestroy(lb_);
  if (ld_) api_->layoutDestroy(ld_);
  if (desc_) api_->descDestroy(desc_);
}

Status LtGemm::run(const void* a, const void* b, void* d, float alpha, void* workspace, cudaStream_t s) const {
  float beta = 0;
  cublasStatus_t r = api_->matmul(api_->handle, desc_, &alpha, a, la_, b, lb_, &beta, d, ld_, d, ld_, &algo_, workspace,
                                  workspace_, s);
  if (r != CUBLAS_STATUS_SUCCESS) return Error{"cublasLtMatmul: " + st(r)};
  return {};
}

}  // namespace gpudoctor::gpubench
