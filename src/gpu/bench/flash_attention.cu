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

// The dynamic shared memory of the launch (the pipelined kernel's K/V stages).
__device__ __forceinline__ unsigned char* dynamicSmem() {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  return smem_raw;
}

}  // namespace

#include "gpu/bench/flash_attention_kernels.inc"

namespace {

template <int D, bool CAUSAL>
cudaError_t launchPipelined(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o,
                            int heads, int seq, float sl, cudaStream_t s) {
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
    if (d == 128)
      return causal ? launchPipelined<128, true>(q, k, v, o, heads, seq, sl, s)
                    : launchPipelined<128, false>(q, k, v, o, heads, seq, sl, s);
    return causal ? launchPipelined<64, true>(q, k, v, o, heads, seq, sl, s)
                  : launchPipelined<64, false>(q, k, v, o, heads, seq, sl, s);
  }
  dim3 grid(static_cast<unsigned>(seq / kBr), static_cast<unsigned>(heads));
  if (d == 128 && !causal)
    flashAttentionForward<128, false><<<grid, 128, 0, s>>>(q, k, v, o, seq, sl);
  else if (d == 128)
    flashAttentionForward<128, true><<<grid, 128, 0, s>>>(q, k, v, o, seq, sl);
  else if (!causal)
    flashAttentionForward<64, false><<<grid, 128, 0, s>>>(q, k, v, o, seq, sl);
  else
    flashAttentionForward<64, true><<<grid, 128, 0, s>>>(q, k, v, o, seq, sl);
  return cudaGetLastError();
}

}  // namespace gpudoctor::gpubench
