// Fix `channels_last`'s constant, shared with its test.
#pragma once

namespace gpudoctor {

// cuDNN's NHWC batch-norm kernels (batchnorm_fwtr_nhwc_semiPersist, batchnorm_bwtr_nhwc_semiPersist) against its
// NCHW ones (bn_fw_tr_1C11_*, bn_bw_1C11_*) for the same batch norms: fitted on the validation lab's fit part,
// regnet_y_fp32 and resnext50_fp32 each traced NCHW and channels_last on an H200 and an H100 (FP32/TF32):
// 38.9 ms against 64.4 ms a step over the four pairs, 0.49-0.74 pair by pair.
inline constexpr double kNhwcBatchNormScale = 0.6;

}  // namespace gpudoctor
