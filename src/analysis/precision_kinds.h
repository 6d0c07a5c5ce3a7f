// Kernels that a change of precision (autocast) moves differently from the rest of their class:
// batch norms (their class, normalization, holds layer norms too) and convolutions (their class is
// the GEMM one of their precision, with the matrix multiplies), told by their names; and a cuDNN
// RNN's kernels (GEMMs with generic names), told by the operator that launched them.
#pragma once

#include <cstdint>
#include <string_view>

namespace gpudoctor {

enum class PrecisionKind : uint8_t { kNone = 0, kBatchNorm, kConvolution, kRecurrent };

// cuDNN's batch-norm kernels (bn_fw_*, bn_bw_*) and PyTorch's native ones (batch_norm_*). Defined
// with the other kernel-name rules (analysis/kernel_class.cc).
bool isBatchNormKernelName(std::string_view name);

// A convolution by its name: cuDNN's and CUTLASS's implicit-GEMM convolutions (fprop, dgrad,
// wgrad), cuDNN's older engines, PyTorch's native depthwise ones. cuDNN's helpers (layout
// transposes, batch norms, the wgrad reduction) are not.
bool isConvolutionKernelName(std::string_view name);

// The operators of cuDNN's RNNs (nn.LSTM, nn.GRU, nn.RNN): aten::_cudnn_rnn and its backward.
inline bool isCudnnRnnOperator(std::string_view op) { return op.find("_cudnn_rnn") != std::string_view::npos; }

inline PrecisionKind precisionKindOf(std::string_view name) {
  if (isBatchNormKernelName(name)) return PrecisionKind::kBatchNorm;
  if (isConvolutionKernelName(name)) return PrecisionKind::kConvolution;
  return PrecisionKind::kNone;
}

}  // namespace gpudoctor
