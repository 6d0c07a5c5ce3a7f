// The matmul layouts of bench gpu run through a host implementation of cuBLASLt's documented
// semantics (column-major, op(A) m x k, op(B) k x n, leading dimensions, strided batches), so a wrong
// transpose, leading dimension or batch stride shows without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "gpu/bench/lt_gemm.h"

namespace gpudoctor::gpubench {
namespace {

// D = alpha · op(A) · op(B) for every batch member, as cublasLtMatmul defines it.
void referenceMatmul(const LtGemmSpec& s, const std::vector<double>& a, const std::vector<double>& b,
                     std::vector<double>& d, double alpha) {
  for (int bt = 0; bt < s.batch; ++bt)
    for (int64_t j = 0; j < s.n; ++j)
      for (int64_t i = 0; i < s.m; ++i) {
        double acc = 0;
        for (int64_t l = 0; l < s.k; ++l) {
          double x =
              s.op_a == CUBLAS_OP_N ? a.at(bt * s.stride_a + i + l * s.lda) : a.at(bt * s.stride_a + l + i * s.lda);
          double y =
              s.op_b == CUBLAS_OP_N ? b.at(bt * s.stride_b + l + j * s.ldb) : b.at(bt * s.stride_b + j + l * s.ldb);
          acc += x * y;
        }
        d.at(bt * s.stride_d + i + j * s.ldd) = alpha * acc;
      }
}

std::vector<double> randomVec(size_t n, uint64_t seed) {
  std::mt19937_64 r(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(n);
  for (auto& x : v) x = u(r);
  return v;
}

TEST(LtGemmSpec, TnGemmIsRowMajorATimesRowMajorBTransposed) {
  int64_t m = 5, n = 3, k = 4;
  auto a = randomVec(m * k, 1), b = randomVec(n * k, 2);
  std::vector<double> d(m * n);
  referenceMatmul(tnGemmSpec(m, n, k), a, b, d, 1.0);
  // What checkGemm assumes: row i of A at i*k, row j of B (column j of op(B)) at j*k, D column j at j*m.
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double ref = 0;
      for (int64_t l = 0; l < k; ++l) ref += a[i * k + l] * b[j * k + l];
      EXPECT_NEAR(d[j * m + i], ref, 1e-12);
    }
}

TEST(LtGemmSpec, UnfusedAttentionIsSoftmaxOfQKTransposedTimesV) {
  int64_t heads = 3, seq = 6, d = 4;
  auto q = randomVec(heads * seq * d, 3), k = randomVec(heads * seq * d, 4), v = randomVec(heads * seq * d, 5);
  double scale = 1 / std::sqrt(static_cast<double>(d));
  std::vector<double> s(heads * seq * seq), o(heads * seq * d);
  referenceMatmul(attentionScoresSpec(heads, seq, d), k, q, s, scale);  // A = K, B = Q, as the bench passes them
  for (int64_t row = 0; row < heads * seq; ++row) {                     // softmaxRows: one row per query, contiguous
    double* p = &s[row * seq];
    double mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < seq; ++j) mx = std::max(mx, p[j]);
    for (int64_t j = 0; j < seq; ++j) sum += (p[j] = std::exp(p[j] - mx));
    for (int64_t j = 0; j < seq; ++j) p[j] /= sum;
  }
  referenceMatmul(attentionOutputSpec(heads, seq, d), v, s, o, 1.0);  // A = V, B = P
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t i = 0; i < seq; ++i) {
      size_t base = h * seq * d;
      std::vector<double> p(seq);
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < seq; ++j) {
        double dot = 0;
        for (int64_t l = 0; l < d; ++l) dot += q[base + i * d + l] * k[base + j * d + l];
        p[j] = dot * scale;
        mx = std::max(mx, p[j]);
      }
      for (int64_t j = 0; j < seq; ++j) sum += (p[j] = std::exp(p[j] - mx));
      for (int64_t l = 0; l < d; ++l) {
        double ref = 0;
        for (int64_t j = 0; j < seq; ++j) ref += p[j] / sum * v[base + j * d + l];
        EXPECT_NEAR(o[base + i * d + l], ref, 1e-12) << "head " << h << " row " << i << " col " << l;
      }
    }
}

}  // namespace
}  // namespace gpudoctor::gpubench
