// Sorts GPU kernels into the classes users reason about (GEMM by precision, attention fused or
// materialized, elementwise, reductions, normalization, optimizer, NCCL, copies) from the kernel
// name and, where the name is silent about precision, the input dtype of the launching operator.
#pragma once
#include <cstdint>
#include <string_view>

namespace gpudoctor {

enum class KernelClass : uint8_t {
  kGemmFp32Simt,
  kGemmTf32,
  kGemmFp16,
  kGemmBf16,
  kGemmFp8,
  kGemmOther,         // a GEMM whose precision neither name nor operator tells
  kAttentionFused,    // flash / memory-efficient / cuDNN fused attention
  kAttentionUnfused,  // batched GEMM or softmax issued by a hand-written attention (bmm/softmax ops)
  kElementwise,
  kReduction,  // reductions, softmax outside attention, losses, sorts
  kNormalization,
  kOptimizer,
  kNccl,
  kCommOther,   // communication kernels that are not NCCL's (DeepEP, NVSHMEM, custom all-reduce: model/comm_kernels.h)
  kCopy,        // copy/cast/cat kernels (not memcpy engines)
  kConvDirect,  // convolutions computed directly, not as a GEMM (PyTorch's depthwise kernels)
  kOther,
};
constexpr int kKernelClassCount = 17;

// Stable short name ("gemm_bf16", "attention_fused", ...).
std::string_view kernelClassName(KernelClass c);
// True for the GEMM classes.
bool isGemm(KernelClass c);
// True for a matrix-multiply kernel by its name (cuBLAS/cuBLASLt, CUTLASS, xmma, nvjet, wgmma),
// whatever class its operator gives it (a materialized attention's batched GEMMs included).
bool isGemmKernelName(std::string_view name);
// True for the NCHW <-> NHWC layout transposes a convolution library runs around a convolution on
// contiguous (NCHW) tensors: cuDNN's nchwToNhwcKernel / nhwcToNchwKernel, MIOpen's batched_transpose_*.
bool isLayoutTransposeKernel(std::string_view name);
// cuDNN's generic tensor transforms (genericTranspose_kernel, tensorTransformGeneric): they reorder a
// convolution's operands in either memory layout (regnet_y_fp32's grouped convolutions, H100: 16.8 ms a
// step of genericTranspose in NCHW, 14.0 ms of tensorTransformGeneric in channels_last), so channels_last
// does not take them; they move bf16 tensors under autocast.
bool isCudnnTensorTransformKernel(std::string_view name);
// The operands' alignment in bytes of a CUTLASS tensor-core GEMM by its name (`..._alignN` elements of
// 2 bytes for bf16/f16 kernels, 4 for TF32 ones); 0 where the name does not say (cuBLAS's own
// kernels, SIMT ones). cuBLAS falls back to such kernels, and to alignment below 16 bytes, when a
// 16-bit GEMM's dimension is not a multiple of 8 (4 for TF32): cutlass_75_tensorop_bf16_s1688gemm_
// bf16_128x128_tn_align1 for GPT-2's vocabulary of 50257 on an H200.
int gemmOperandAlignmentBytes(std::string_view name);
// True for a fused attention kernel that computes in FP32 by its name (PyTorch's memory-efficient
// fmha_cutlassF_f32 / fmha_cutlassB_f32; flash and cuDNN fused attention have no FP32 kernels).
bool isFp32FusedAttentionKernel(std::string_view name);
// True for NCCL kernels (ncclDevKernel_*, ncclKernel_*).
// Communication kernels: kNccl and kCommOther (the breakdown counts both as communication).
inline bool isCommunication(KernelClass c) { return c == KernelClass::kNccl || c == KernelClass::kCommOther; }
bool isNcclKernel(std::string_view name);

// Classifies a kernel. op_name: the cpu_op that launched it (may be empty); op_dtype: that op's
// first input dtype from record_shapes ("c10::BFloat16", "float"; may be empty).
// The operator names and dtypes matched here (aten::bmm, aten::_softmax, scaled_dot_product*,
// _foreach_*, "c10::BFloat16") are PyTorch's, deliberately not turned into reader roles: they only
// refine what the kernel name (the GPU's own, the same from any source) already says, a source
// without operators passes empty strings and gets the name-only class, the index classifies each
// distinct (kernel, operator, dtype) once, and four more role bits do not fit in Event::roles.
KernelClass classifyKernel(std::string_view name, std::string_view op_name, std::string_view op_dtype);

}  // namespace gpudoctor
