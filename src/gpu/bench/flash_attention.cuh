// This project's fused attention forward (flash-style, FlashAttention-2 layout): one block of 4 warps
// owns 64 query rows; K/V tiles of 64 keys pass through shared memory; S = Q·K^T and O += P·V run on
// bf16 tensor cores (mma.sync m16n8k16, fp32 accumulation) and the softmax is online (running max
// and sum per row in registers), so the S x S scores never exist in memory.
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace gpudoctor::gpubench {

// Two kernels of the same algorithm: kSimple loads each K/V tile synchronously (V transposed on the
// way into shared memory, 32-bit fragment loads); kPipelined double-buffers the tiles with cp.async
// and hands out fragments with ldmatrix (.trans for V).
enum class FlashVariant { kSimple, kPipelined };

// Launches on Q, K, V, O: [heads][seq][d] bf16, contiguous (heads = batch x heads); d is 64 or 128,
// seq a multiple of 64. Returns the launch error.
cudaError_t launchFlashAttention(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                                 __nv_bfloat16* o, int heads, int seq, int d, bool causal, FlashVariant variant,
                                 cudaStream_t s);

}  // namespace gpudoctor::gpubench
