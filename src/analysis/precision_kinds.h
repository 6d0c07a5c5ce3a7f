// Kernels that a change of precision (autocast) moves differently from the rest of their class:
// batch norms (their class, normalization, holds layer norms too) and convolutions (their class is
// the GEMM one of their precision, with the matrix multiplies), told by their names; and a cuDNN
// RNN's kernels (GEMMs with generic names), told by the operator that launched them.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>

namespace gpudoctor {

enum class PrecisionKind : uint8_t { kNone = 0, kBatchNorm, kConvolution, kRecurrent };

namespace precision_kinds_detail {
inline std::string lowered(std::string_view s) {
  std::string o(s);
  std::transform(o.begin(), o.end(), o.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return o;
}
inline bool has(std::string_view s, std::string_view w) { return s.find(w) != std::string_view::npos; }
}  // namespace precision_kinds_detail

// cuDNN's batch-norm kernels (bn_fw_*, bn_bw_*) and PyTorch's native ones (batch_norm_*).
inline bool isBatchNormKernelName(std::string_view name) {
  using namespace precision_kinds_detail;
  const std::string ln = lowered(name);
  return has(ln, "bn_fw") || has(ln, "bn_bw") || has(ln, "batch_norm") || has(ln, "batchnorm");
}

// A convolution by its name: cuDNN's and CUTLASS's implicit-GEMM convolutions (fprop, dgrad,
// wgrad), cuDNN's older engines, PyTorch's native depthwise ones. cuDNN's helpers (layout
// transposes, batch norms, the wgrad reduction) are not.
inline bool isConvolutionKernelName(std::string_view name) {
  using namespace precision_kinds_detail;
  const std::string ln = lowered(name);
  if (has(ln, "bn_fw") || has(ln, "bn_bw") || has(ln, "transpose") || has(ln, "nchwtonhwc") || has(ln, "nhwctonchw") ||
      has(ln, "reduce_wgrad") || has(ln, "tensortransform"))
    return false;
  return has(ln, "conv") || has(ln, "fprop") || has(ln, "dgrad") || has(ln, "wgrad") || has(ln, "implicit_gemm") ||
         has(ln, "scudnn") || has(ln, "winograd");
}

// The operators of cuDNN's RNNs (nn.LSTM, nn.GRU, nn.RNN): aten::_cudnn_rnn and its backward.
inline bool isCudnnRnnOperator(std::string_view op) { return op.find("_cudnn_rnn") != std::string_view::npos; }

inline PrecisionKind precisionKindOf(std::string_view name) {
  if (isBatchNormKernelName(name)) return PrecisionKind::kBatchNorm;
  if (isConvolutionKernelName(name)) return PrecisionKind::kConvolution;
  return PrecisionKind::kNone;
}

}  // namespace gpudoctor
