#include "gpu/bench/flash_attention.cuh"

namespace gpudoctor::gpubench {

namespace {

constexpr int kBr = 64;  // query rows per block (16 per warp)
constexpr int kBc = 64;  // keys per tile

__device__ __forceinline__ void mma16816(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint32_t packBf16(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);  // .x (lo) at the lower address / lower 16 bits
  return *reinterpret_cast<uint32_t*>(&v);
}

__device__ __forceinline__ uint32_t load32(const __nv_bfloat16* p) { return *reinterpret_cast<const uint32_t*>(p); }

}  // namespace

template <int D, bool CAUSAL>
__global__ void __launch_bounds__(128) flashAttentionForward(const __nv_bfloat16* __restrict__ Q,
                                                             const __nv_bfloat16* __restrict__ K,
                                                             const __nv_bfloat16* __restrict__ V,
                                                             __nv_bfloat16* __restrict__ O, int seq,
                                                             float scale_log2e) {
  static_assert(D % 16 == 0 && D <= 128, "head dim");
  // Padded rows (+8 bf16 = 16 bytes) make the fragment loads below free of bank conflicts:
  // a row of Ks is (D+8)/2 words, 4 mod 32, so lanes (g, t) hit banks 4g + t.
  __shared__ __align__(16) __nv_bfloat16 Ks[kBc][D + 8];
  __shared__ __align__(16) __nv_bfloat16 Vt[D][kBc + 8];  // V transposed: the P·V B-fragment wants keys contiguous

  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int g = lane >> 2, t = lane & 3;  // mma fragment coordinates: row group, thread in group
  const size_t head = blockIdx.y;
  const __nv_bfloat16* q = Q + head * seq * D;
  const __nv_bfloat16* k = K + head * seq * D;
  const __nv_bfloat16* v = V + head * seq * D;
  __nv_bfloat16* o = O + head * seq * D;
  // Highest query blocks first: with causal masking they have the most tiles, and starting them
  // first keeps the last wave from being a few long blocks.
  const int q_block = (gridDim.x - 1 - blockIdx.x) * kBr;
  const int r0 = q_block + warp * 16 + g, r1 = r0 + 8;  // the two rows this thread holds

  // Q fragments (A operand, row-major 16 x 16 per k-step), kept in registers for the whole pass.
  uint32_t qa[D / 16][4];
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    qa[kk][0] = load32(q + r0 * D + kk * 16 + 2 * t);
    qa[kk][1] = load32(q + r1 * D + kk * 16 + 2 * t);
    qa[kk][2] = load32(q + r0 * D + kk * 16 + 2 * t + 8);
    qa[kk][3] = load32(q + r1 * D + kk * 16 + 2 * t + 8);
  }
  float acc[D / 8][4];
#pragma unroll
  for (int i = 0; i < D / 8; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.f;
  float m0 = -INFINITY, m1 = -INFINITY;  // running max of rows r0, r1 (log2 domain)
  float l0 = 0.f, l1 = 0.f;              // this thread's part of the running sums

  const int kv_end = CAUSAL ? q_block + kBr : seq;
  for (int j0 = 0; j0 < kv_end; j0 += kBc) {
    __syncthreads();  // the previous tile is no longer read
    // K tile as is (consecutive threads along a row: coalesced loads, 16-byte shared stores).
    for (int c = threadIdx.x; c < kBc * D / 8; c += 128) {
      int row = c / (D / 8), col = (c % (D / 8)) * 8;
      *reinterpret_cast<uint4*>(&Ks[row][col]) = *reinterpret_cast<const uint4*>(k + (size_t)(j0 + row) * D + col);
    }
    // V tile transposed, consecutive threads down a column: the scalar shared stores of a warp then
    // fall in consecutive bf16 of one Vt row (no bank conflicts) at the price of half-used L2 sectors.
    for (int c = threadIdx.x; c < kBc * D / 8; c += 128) {
      int row = c % kBc, col = (c / kBc) * 8;
      uint4 vv = *reinterpret_cast<const uint4*>(v + (size_t)(j0 + row) * D + col);
      const __nv_bfloat16* ve = reinterpret_cast<const __nv_bfloat16*>(&vv);
#pragma unroll
      for (int e = 0; e < 8; ++e) Vt[col + e][row] = ve[e];
    }
    __syncthreads();

    // S = Q·K^T for 16 rows x 64 keys: 8 n-tiles of 8 keys.
    float s[kBc / 8][4];
#pragma unroll
    for (int nt = 0; nt < kBc / 8; ++nt) {
      s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.f;
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        // B = K^T (col-major k x n): element (k, n) = Ks[n][k]; pairs along k are contiguous.
        uint32_t b0 = load32(&Ks[nt * 8 + g][kk * 16 + 2 * t]);
        uint32_t b1 = load32(&Ks[nt * 8 + g][kk * 16 + 2 * t + 8]);
        mma16816(s[nt], qa[kk], b0, b1);
      }
    }
    // Online softmax in the log2 domain: x = s · scale · log2(e).
    float mx0 = -INFINITY, mx1 = -INFINITY;
#pragma unroll
    for (int nt = 0; nt < kBc / 8; ++nt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float x = s[nt][e] * scale_log2e;
        if (CAUSAL) {
          int key = j0 + nt * 8 + 2 * t + (e & 1);
          int row = e < 2 ? r0 : r1;
          if (key > row) x = -INFINITY;
        }
        s[nt][e] = x;
      }
      mx0 = fmaxf(mx0, fmaxf(s[nt][0], s[nt][1]));
      mx1 = fmaxf(mx1, fmaxf(s[nt][2], s[nt][3]));
    }
    // The four threads of a row group share the row: reduce across t.
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 2));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 1));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 2));
    // Every processed tile holds key j0 <= the block's first row, so each row has a finite max.
    float n0 = fmaxf(m0, mx0), n1 = fmaxf(m1, mx1);
    float alpha0 = exp2f(m0 - n0), alpha1 = exp2f(m1 - n1);  // exp2(-inf) = 0 on the first tile
    m0 = n0;
    m1 = n1;
    l0 *= alpha0;
    l1 *= alpha1;
#pragma unroll
    for (int i = 0; i < D / 8; ++i) {
      acc[i][0] *= alpha0;
      acc[i][1] *= alpha0;
      acc[i][2] *= alpha1;
      acc[i][3] *= alpha1;
    }
#pragma unroll
    for (int nt = 0; nt < kBc / 8; ++nt) {
      s[nt][0] = exp2f(s[nt][0] - n0);
      s[nt][1] = exp2f(s[nt][1] - n0);
      s[nt][2] = exp2f(s[nt][2] - n1);
      s[nt][3] = exp2f(s[nt][3] - n1);
      l0 += s[nt][0] + s[nt][1];
      l1 += s[nt][2] + s[nt][3];
    }
    // O += P·V. The accumulator layout of two adjacent n-tiles is the A-fragment layout of one
    // k-step of 16 keys, so P goes from registers to the tensor cores without shared memory.
#pragma unroll
    for (int kk = 0; kk < kBc / 16; ++kk) {
      uint32_t pa[4] = {packBf16(s[2 * kk][0], s[2 * kk][1]), packBf16(s[2 * kk][2], s[2 * kk][3]),
                        packBf16(s[2 * kk + 1][0], s[2 * kk + 1][1]), packBf16(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int dn = 0; dn < D / 8; ++dn) {
        // B = V (k = key, n = dim), col-major: element (k, n) = Vt[n][k].
        uint32_t b0 = load32(&Vt[dn * 8 + g][kk * 16 + 2 * t]);
        uint32_t b1 = load32(&Vt[dn * 8 + g][kk * 16 + 2 * t + 8]);
        mma16816(acc[dn], pa, b0, b1);
      }
    }
  }
  l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
  l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
  l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
  l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
  float inv0 = 1.f / l0, inv1 = 1.f / l1;
#pragma unroll
  for (int dn = 0; dn < D / 8; ++dn) {
    *reinterpret_cast<uint32_t*>(o + (size_t)r0 * D + dn * 8 + 2 * t) = packBf16(acc[dn][0] * inv0, acc[dn][1] * inv0);
    *reinterpret_cast<uint32_t*>(o + (size_t)r1 * D + dn * 8 + 2 * t) = packBf16(acc[dn][2] * inv1, acc[dn][3] * inv1);
  }
}

namespace {

__device__ __forceinline__ uint32_t smemAddr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void cpAsync16(void* smem, const void* gmem) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smemAddr(smem)), "l"(gmem));
}
__device__ __forceinline__ void cpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::); }
__device__ __forceinline__ void cpAsyncWaitAllButOne() { asm volatile("cp.async.wait_group 1;\n" ::); }
// Four 8x8 b16 matrices; lane l gives the row address of matrix l/8, thread (g, t) receives in register
// j the pair (row g, cols 2t, 2t+1) of matrix j (.trans: the pair (rows 2t, 2t+1, col g)).
__device__ __forceinline__ void ldmatrixX4(uint32_t (&r)[4], const void* row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smemAddr(row)));
}
__device__ __forceinline__ void ldmatrixX4Trans(uint32_t (&r)[4], const void* row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smemAddr(row)));
}

}  // namespace

// The same algorithm as flashAttentionForward, with the data movement of a tuned kernel: K and V
// tiles arrive by cp.async into two stages (the next tile loads while this one is computed), V stays
// row-major and ldmatrix.trans hands out its B fragments, ldmatrix.x4 replaces four 32-bit shared
// loads. Dynamic shared memory: 2 stages x (K + V) x 64 x (D + 8) bf16.
template <int D, bool CAUSAL>
__global__ void __launch_bounds__(128) flashAttentionForwardPipelined(const __nv_bfloat16* __restrict__ Q,
                                                                      const __nv_bfloat16* __restrict__ K,
                                                                      const __nv_bfloat16* __restrict__ V,
                                                                      __nv_bfloat16* __restrict__ O, int seq,
                                                                      float scale_log2e) {
  static_assert(D % 32 == 0 && D <= 128, "head dim");
  constexpr int kPitch = D + 8;  // 16-byte padding: the 8 row addresses of an ldmatrix hit distinct banks
  constexpr int kStage = kBc * kPitch;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __nv_bfloat16* ks = reinterpret_cast<__nv_bfloat16*>(smem_raw);  // [2][kBc][kPitch]
  __nv_bfloat16* vs = ks + 2 * kStage;                              // [2][kBc][kPitch]

  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int g = lane >> 2, t = lane & 3;
  const size_t head = blockIdx.y;
  const __nv_bfloat16* q = Q + head * seq * D;
  const __nv_bfloat16* k = K + head * seq * D;
  const __nv_bfloat16* v = V + head * seq * D;
  __nv_bfloat16* o = O + head * seq * D;
  const int q_block = (gridDim.x - 1 - blockIdx.x) * kBr;  // heaviest (causal) blocks first
  const int r0 = q_block + warp * 16 + g, r1 = r0 + 8;

  auto loadTile = [&](int stage, int j0) {
    for (int c = threadIdx.x; c < kBc * D / 8; c += 128) {
      int row = c / (D / 8), col = (c % (D / 8)) * 8;
      cpAsync16(ks + stage * kStage + row * kPitch + col, k + (size_t)(j0 + row) * D + col);
      cpAsync16(vs + stage * kStage + row * kPitch + col, v + (size_t)(j0 + row) * D + col);
    }
  };
  const int kv_end = CAUSAL ? q_block + kBr : seq;
  const int tiles = kv_end / kBc;
  loadTile(0, 0);
  cpAsyncCommit();

  uint32_t qa[D / 16][4];
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    qa[kk][0] = load32(q + r0 * D + kk * 16 + 2 * t);
    qa[kk][1] = load32(q + r1 * D + kk * 16 + 2 * t);
    qa[kk][2] = load32(q + r0 * D + kk * 16 + 2 * t + 8);
    qa[kk][3] = load32(q + r1 * D + kk * 16 + 2 * t + 8);
  }
  float acc[D / 8][4];
#pragma unroll
  for (int i = 0; i < D / 8; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.f;
  float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.f, l1 = 0.f;

  for (int it = 0; it < tiles; ++it) {
    const int j0 = it * kBc;
    // The stage loaded next was last read in the previous iteration, which ended in a barrier.
    if (it + 1 < tiles) loadTile((it + 1) & 1, j0 + kBc);
    cpAsyncCommit();          // possibly an empty group: keeps "all but the newest" meaning "this tile"
    cpAsyncWaitAllButOne();
    __syncthreads();          // every thread's copies of this tile are visible
    const __nv_bfloat16* kt = ks + (it & 1) * kStage;
    const __nv_bfloat16* vt = vs + (it & 1) * kStage;

    float s[kBc / 8][4];
#pragma unroll
    for (int nt = 0; nt < kBc / 8; ++nt) {
      s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.f;
#pragma unroll
      for (int kk = 0; kk < D / 16; kk += 2) {
        // Matrices: keys nt*8..+7 x dims kk*16 + {0, 8, 16, 24}..+7 -> b0, b1 of kk and of kk + 1.
        uint32_t b[4];
        ldmatrixX4(b, kt + (nt * 8 + (lane & 7)) * kPitch + kk * 16 + (lane >> 3) * 8);
        mma16816(s[nt], qa[kk], b[0], b[1]);
        mma16816(s[nt], qa[kk + 1], b[2], b[3]);
      }
    }
    float mx0 = -INFINITY, mx1 = -INFINITY;
#pragma unroll
    for (int nt = 0; nt < kBc / 8; ++nt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float x = s[nt][e] * scale_log2e;
        if (CAUSAL) {
          int key = j0 + nt * 8 + 2 * t + (e & 1);
          if (key > (e < 2 ? r0 : r1)) x = -INFINITY;
        }
        s[nt][e] = x;
      }
      mx0 = fmaxf(mx0, fmaxf(s[nt][0], s[nt][1]));
      mx1 = fmaxf(mx1, fmaxf(s[nt][2], s[nt][3]));
    }
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 2));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 1));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 2));
    float n0 = fmaxf(m0, mx0), n1 = fmaxf(m1, mx1);
    float alpha0 = exp2f(m0 - n0), alpha1 = exp2f(m1 - n1);
    m0 = n0;
    m1 = n1;
    l0 *= alpha0;
    l1 *= alpha1;
#pragma unroll
    for (int i = 0; i < D / 8; ++i) {
      acc[i][0] *= alpha0;
      acc[i][1] *= alpha0;
      acc[i][2] *= alpha1;
      acc[i][3] *= alpha1;
    }
#pragma unroll
    for (int nt = 0; nt < kBc / 8; ++nt) {
      s[nt][0] = exp2f(s[nt][0] - n0);
      s[nt][1] = exp2f(s[nt][1] - n0);
      s[nt][2] = exp2f(s[nt][2] - n1);
      s[nt][3] = exp2f(s[nt][3] - n1);
      l0 += s[nt][0] + s[nt][1];
      l1 += s[nt][2] + s[nt][3];
    }
#pragma unroll
    for (int kk = 0; kk < kBc / 16; ++kk) {
      uint32_t pa[4] = {packBf16(s[2 * kk][0], s[2 * kk][1]), packBf16(s[2 * kk][2], s[2 * kk][3]),
                        packBf16(s[2 * kk + 1][0], s[2 * kk + 1][1]), packBf16(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int dn = 0; dn < D / 8; dn += 2) {
        // Matrices (.trans): keys kk*16 + {0, 8}..+7 x dims dn*8 + {0, 8}..+7 -> b0, b1 of dn and of dn + 1.
        uint32_t b[4];
        ldmatrixX4Trans(b, vt + (kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * kPitch + dn * 8 + (lane >> 4) * 8);
        mma16816(acc[dn], pa, b[0], b[1]);
        mma16816(acc[dn + 1], pa, b[2], b[3]);
      }
    }
    __syncthreads();  // this stage is free for the load two iterations on
  }
  l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
  l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
  l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
  l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
  float inv0 = 1.f / l0, inv1 = 1.f / l1;
#pragma unroll
  for (int dn = 0; dn < D / 8; ++dn) {
    *reinterpret_cast<uint32_t*>(o + (size_t)r0 * D + dn * 8 + 2 * t) = packBf16(acc[dn][0] * inv0, acc[dn][1] * inv0);
    *reinterpret_cast<uint32_t*>(o + (size_t)r1 * D + dn * 8 + 2 * t) = packBf16(acc[dn][2] * inv1, acc[dn][3] * inv1);
  }
}

namespace {

template <int D, bool CAUSAL>
cudaError_t launchPipelined(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                            __nv_bfloat16* o, int heads, int seq, float sl, cudaStream_t s) {
  constexpr int kSmem = 2 * 2 * kBc * (D + 8) * 2;
  static cudaError_t attr = cudaFuncSetAttribute(flashAttentionForwardPipelined<D, CAUSAL>,
                                                 cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
  if (attr != cudaSuccess) return attr;
  dim3 grid(static_cast<unsigned>(seq / kBr), static_cast<unsigned>(heads));
  flashAttentionForwardPipelined<D, CAUSAL><<<grid, 128, kSmem, s>>>(q, k, v, o, seq, sl);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launchFlashAttention(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                                 __nv_bfloat16* o, int heads, int seq, int d, bool causal, FlashVariant variant,
                                 cudaStream_t s) {
  if ((d != 64 && d != 128) || seq % kBr != 0 || seq <= 0 || heads <= 0) return cudaErrorInvalidValue;
  float sl = static_cast<float>(1.0 / sqrt(static_cast<double>(d)) * 1.4426950408889634);
  if (variant == FlashVariant::kPipelined) {
    if (d == 128) return causal ? launchPipelined<128, true>(q, k, v, o, heads, seq, sl, s)
                                : launchPipelined<128, false>(q, k, v, o, heads, seq, sl, s);
    return causal ? launchPipelined<64, true>(q, k, v, o, heads, seq, sl, s)
                  : launchPipelined<64, false>(q, k, v, o, heads, seq, sl, s);
  }
  dim3 grid(static_cast<unsigned>(seq / kBr), static_cast<unsigned>(heads));
  if (d == 128 && !causal) flashAttentionForward<128, false><<<grid, 128, 0, s>>>(q, k, v, o, seq, sl);
  else if (d == 128) flashAttentionForward<128, true><<<grid, 128, 0, s>>>(q, k, v, o, seq, sl);
  else if (!causal) flashAttentionForward<64, false><<<grid, 128, 0, s>>>(q, k, v, o, seq, sl);
  else flashAttentionForward<64, true><<<grid, 128, 0, s>>>(q, k, v, o, seq, sl);
  return cudaGetLastError();
}

}  // namespace gpudoctor::gpubench
