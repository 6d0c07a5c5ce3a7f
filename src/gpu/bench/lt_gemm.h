// cuBLASLt reached through dlopen (libcublasLt.so.13, or GPUDOCTOR_CUBLASLT_LIBRARY): the toolkit
// header gives the exact types and enums at build time, the library is found at run time (the
// CUDA 13 toolkit or PyTorch's wheel provide it), so the binary carries no 540 MB static library.
// LtGemm is one planned matmul (layouts, algorithm from the heuristic, workspace), run many times.
#pragma once
#include <cublasLt.h>

#include <memory>

#include "common/result.h"

namespace gpudoctor::gpubench {

// The cuBLASLt entry points we use.
struct CublasLtApi {
  decltype(&cublasLtCreate) create;
  decltype(&cublasLtDestroy) destroy;
  decltype(&cublasLtGetVersion) getVersion;
  decltype(&cublasLtMatmulDescCreate) descCreate;
  decltype(&cublasLtMatmulDescDestroy) descDestroy;
  decltype(&cublasLtMatmulDescSetAttribute) descSet;
  decltype(&cublasLtMatrixLayoutCreate) layoutCreate;
  decltype(&cublasLtMatrixLayoutDestroy) layoutDestroy;
  decltype(&cublasLtMatrixLayoutSetAttribute) layoutSet;
  decltype(&cublasLtMatmulPreferenceCreate) prefCreate;
  decltype(&cublasLtMatmulPreferenceDestroy) prefDestroy;
  decltype(&cublasLtMatmulPreferenceSetAttribute) prefSet;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic;
  decltype(&cublasLtMatmul) matmul;
  cublasLtHandle_t handle = nullptr;  // one per process
};

// Loads the library once and creates the handle; an Error names the library and the missing symbol.
Result<const CublasLtApi*> cublasLt();

// One matmul in cuBLASLt's column-major terms: D = alpha · op(A) · op(B) (+ beta · C, C = D).
struct LtGemmSpec {
  cudaDataType_t a_type = CUDA_R_16BF, b_type = CUDA_R_16BF, d_type = CUDA_R_16BF;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cublasOperation_t op_a = CUBLAS_OP_T, op_b = CUBLAS_OP_N;
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldd = 0;
  int batch = 1;
  int64_t stride_a = 0, stride_b = 0, stride_d = 0;  // elements between batch members
  const float* a_scale = nullptr;                    // fp8: device pointers to the dequantization scales
  const float* b_scale = nullptr;
};

// The layouts the benchmarks use, in one place so a host test can run them through a reference
// implementation of cuBLASLt's column-major semantics (lt_gemm_spec_test.cc).
// GEMM bench, "TN": A row-major m x k (row i at i*k), B row-major n x k (row j at j*k), D = A·B^T
// column-major m x n (column j at j*m).
inline LtGemmSpec tnGemmSpec(int64_t m, int64_t n, int64_t k) {
  LtGemmSpec s;
  s.op_a = CUBLAS_OP_T, s.op_b = CUBLAS_OP_N;
  s.m = m, s.n = n, s.k = k;
  s.lda = k, s.ldb = k, s.ldd = m;
  return s;
}
// Unfused attention over heads [h][seq][d] row-major: first S[h] = alpha·Q[h]·K[h]^T, row-major
// [seq_q][seq_k] (cuBLASLt: K^T·Q column-major); then O[h] = P[h]·V[h], row-major [seq][d].
inline LtGemmSpec attentionScoresSpec(int64_t heads, int64_t seq, int64_t d) {
  LtGemmSpec s;
  s.op_a = CUBLAS_OP_T, s.op_b = CUBLAS_OP_N;
  s.m = seq, s.n = seq, s.k = d;
  s.lda = d, s.ldb = d, s.ldd = seq;
  s.batch = static_cast<int>(heads);
  s.stride_a = s.stride_b = seq * d, s.stride_d = seq * seq;
  return s;
}
inline LtGemmSpec attentionOutputSpec(int64_t heads, int64_t seq, int64_t d) {
  LtGemmSpec s;
  s.op_a = CUBLAS_OP_N, s.op_b = CUBLAS_OP_N;
  s.m = d, s.n = seq, s.k = seq;
  s.lda = d, s.ldb = seq, s.ldd = d;
  s.batch = static_cast<int>(heads);
  s.stride_a = seq * d, s.stride_b = seq * seq, s.stride_d = seq * d;
  return s;
}

class LtGemm {
 public:
  // Plans the matmul: an Error when cuBLASLt has no algorithm for it on this GPU.
  static Result<std::unique_ptr<LtGemm>> plan(const LtGemmSpec& spec, size_t workspace_bytes);
  ~LtGemm();
  // Enqueues D = alpha·op(A)·op(B) on s with the given workspace (at least the planned size).
  Status run(const void* a, const void* b, void* d, float alpha, void* workspace, cudaStream_t s) const;

 private:
  LtGemm() = default;
  const CublasLtApi* api_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t la_ = nullptr, lb_ = nullptr, ld_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  size_t workspace_ = 0;
};

}  // namespace gpudoctor::gpubench
