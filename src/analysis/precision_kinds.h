// Kernels that a change of precision (autocast), of memory layout or of a GEMM's dimensions moves
// differently from the rest of their class: batch norms (their class, normalization, holds layer norms
// too), convolutions (their class is the GEMM one of their precision, with the matrix multiplies), the
// convolution libraries' NCHW<->NHWC layout transposes and tensor-core GEMMs on misaligned operands, told
// by their names; and a cuDNN RNN's kernels (GEMMs with generic names), told by the operator that
// launched them.
#pragma once

#include <cstdint>
#include <string_view>

#include "analysis/kernel_class.h"

namespace gpudoctor {

// kMisalignedGemm2/4/8: a tensor-core GEMM on operands aligned to 2, 4 or 8 bytes (kernel_class.h),
// not 16: a dimension that is not a multiple of 8 (16-bit) or 4 (TF32).
enum class PrecisionKind : uint8_t {
  kNone = 0,
  kBatchNorm,  // an NCHW kernel (isNchwBatchNormKernelName)
  kBatchNormNhwc,
  kConvolution,
  kRecurrent,
  kLayoutTranspose,
  kTensorTransform,  // cuDNN's generic tensor transforms around its convolutions (isCudnnTensorTransformKernel)
  kMisalignedGemm2,
  kMisalignedGemm4,
  kMisalignedGemm8
};
// The operand alignment of a misaligned GEMM's kind as an index: 0 (2 bytes or less), 1 (4), 2 (8);
// -1 for other kinds.
inline int misalignedGemmIndex(PrecisionKind k) {
  return k >= PrecisionKind::kMisalignedGemm2 ? static_cast<int>(k) - static_cast<int>(PrecisionKind::kMisalignedGemm2)
                                              : -1;
}

// cuDNN's batch-norm kernels (bn_fw_*, bn_bw_*) and PyTorch's native ones (batch_norm_*). Defined
// with the other kernel-name rules (analysis/kernel_class.cc).
bool isBatchNormKernelName(std::string_view name);
// A batch norm's NCHW kernel (cuDNN's bn_fw_tr_1C11_*, bn_bw_1C11_*, PyTorch's native batch_norm_*), not
// one of cuDNN's NHWC ones (batchnorm_fwtr_nhwc_*, batchnorm_bwtr_nhwc_*).
bool isNchwBatchNormKernelName(std::string_view name);

// A convolution by its name: cuDNN's and CUTLASS's implicit-GEMM convolutions (fprop, dgrad,
// wgrad), cuDNN's older engines, PyTorch's native depthwise ones. cuDNN's helpers (layout
// transposes, batch norms, the wgrad reduction) are not.
bool isConvolutionKernelName(std::string_view name);

// The operators of cuDNN's RNNs (nn.LSTM, nn.GRU, nn.RNN): aten::_cudnn_rnn and its backward.
inline bool isCudnnRnnOperator(std::string_view op) { return op.find("_cudnn_rnn") != std::string_view::npos; }

// A misaligned GEMM's kind by its name (gemmOperandAlignmentBytes below 16), else kNone.
inline PrecisionKind misalignedGemmKind(std::string_view name) {
  const int a = gemmOperandAlignmentBytes(name);
  if (a <= 0 || a >= 16) return PrecisionKind::kNone;
  return a <= 2   ? PrecisionKind::kMisalignedGemm2
         : a <= 4 ? PrecisionKind::kMisalignedGemm4
                  : PrecisionKind::kMisalignedGemm8;
}

inline PrecisionKind precisionKindOf(std::string_view name) {
  if (isBatchNormKernelName(name))
    return isNchwBatchNormKernelName(name) ? PrecisionKind::kBatchNorm : PrecisionKind::kBatchNormNhwc;
  if (isConvolutionKernelName(name)) return PrecisionKind::kConvolution;
  if (isLayoutTransposeKernel(name)) return PrecisionKind::kLayoutTranspose;
  if (isCudnnTensorTransformKernel(name)) return PrecisionKind::kTensorTransform;
  return misalignedGemmKind(name);
}

}  // namespace gpudoctor
