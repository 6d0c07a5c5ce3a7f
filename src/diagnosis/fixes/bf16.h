// Fix `bf16`: its measured constants (used by its edit and by tests, and by the fp32_gemm rule).
#pragma once
#include <cstdint>

namespace gpudoctor {

// bf16 autocast, from the validation jobs' FP32 and bf16 traces (testdata/whatif, H200): BF16
// tensor-core GEMMs ran 11.6-13.5x faster than the FP32 SIMT ones of the same model where the
// peaks' ratio is 15.4x (80 % of it), tiny ones (5 us in FP32) only 1.8-2.4x (about 3 us each);
// autocast's casts added 2.5-21 us of copy kernels per GEMM, about 2 us plus 4 % of the FP32
// GEMM's time (3-66 % of it: the casts' bytes grow slower than the GEMM's FLOPs); elementwise kernels took
// 0.82-0.86x their FP32 time in transformers (0.52x in a ResNet); normalization, reductions and
// the optimizer's kernels 0.84-1.06x.
inline constexpr double kBf16GemmEfficiency = 0.8;
inline constexpr int64_t kBf16GemmFloorNs = 3000;
inline constexpr int64_t kAutocastCastNs = 2000;
inline constexpr double kAutocastCastShare = 0.04;
inline constexpr double kBf16ElementwiseScale = 0.85;
// A materialized attention's score-matrix kernels other than its batched GEMMs (scaling, masking,
// softmax, dropout and their backward): autocast runs the softmax in FP32, so casts into and out of it
// join them. They took 1.34x and 1.18x their FP32 time (gpt_fp32_naive, hf_gpt2_eager_fp32: 132 -> 180
// and 162 -> 216 kernels in 3 steps).
inline constexpr double kAutocastAttentionScoresScale = 1.25;
// Convolution networks, from the lab's fit jobs' FP32 and bf16 traces (validation/, H200: regnet_y_1_6gf,
// resnext50_32x4d, efficientnet_b0): with batch norm, the activations stay bf16 from one convolution to
// the next, so elementwise kernels took 0.52-0.61x their FP32 time (transformers keep an FP32 residual
// stream: 0.70-0.94x); the elementwise scale goes from kBf16ElementwiseScale to this with the share of
// GEMM-class time in convolutions. Batch norms ran on bf16 inputs with FP32 statistics and casts:
// 1.32-1.36x. Implicit-GEMM convolutions (TF32, and FP32 grouped ones) took 0.34 and 0.39x (regnet,
// resnext); PyTorch's native depthwise ones are not GEMMs and stayed as they were (0.97x).
inline constexpr double kBf16ConvNetElementwiseScale = 0.57;
inline constexpr double kAutocastBatchNormScale = 1.33;
inline constexpr double kBf16ConvolutionScale = 0.36;
// The convolution libraries' NCHW <-> NHWC layout transposes and cuDNN's tensor transforms
// (PrecisionKind::kLayoutTranspose, kTensorTransform) move bf16 tensors under autocast: half the bytes.
// Over the fit jobs' FP32 and bf16 traces they went 32.1 -> 14.3 ms a step (x0.45): regnet_y_fp32 21.9 ->
// 6.1 (H100; cuDNN's genericTranspose gone), resnext50_fp32 6.9 -> 5.3 (H100), the old set's resnet_fp32
// 3.3 -> 2.9 (H200). Before, they were kept whole, and regnet_y's bf16 was predicted at 1.01x against
// 1.27x measured (H100; 0.92x against 1.19x on the H200).
inline constexpr double kBf16LayoutTransposeScale = 0.5;
// cuDNN's RNNs run in FP16 under autocast (fit job gru_lm_fp32, H200): their TF32 recurrent GEMMs
// took 0.26x their time, the RNN's cell kernels 0.51x (half the bytes).
inline constexpr double kAutocastRecurrentGemmScale = 0.26;
inline constexpr double kAutocastRecurrentOtherScale = 0.5;
// The most bf16 takes from an elementwise kernel: half its bytes (the fp32_gemm finding's bound).
inline constexpr double kBf16ElementwiseScaleMin = 0.5;
// Fused attention: PyTorch runs scaled_dot_product_attention in FP32 on its memory-efficient SIMT
// kernels (fmha_cutlassF/B_f32) and in BF16 on flash / cuDNN tensor-core kernels. The same jobs'
// FP32 and BF16 traces (testdata/whatif, H200): the BF16 kernels took 0.107x (gpt_fp32_naive sdpa),
// 0.126x (loader_bound) and 0.169x (mask_nonzero) of the FP32 ones' time, 0.47x where they are tiny
// (gpt_launch_bound, 11 us each in FP32). FP32 peak / (BF16 peak x this) = 0.126 on the H200's
// measured ceilings: a fused attention reaches about half the share of the BF16 peak that a GEMM does.
inline constexpr double kBf16AttentionEfficiency = 0.5;
// Autocast's casts on the host (ReplayEdits::autocast_cast_ns; where they run: CastSite): the host
// time autocast adds to a step, per cast it makes. Measured without the profiler by
// scripts/probes/autocast_host_cost.py --interleave 20 on the H200 machine (torch 2.11; MLPs of 4, 16 and 64
// Linear+GELU layers, tiny tensors so that the host sets the step, FP32 and bf16 rounds alternated with
// a probe of the host's speed before each; testdata/whatif/autocast_interleaved_h200.jsonl): medians
// 29.6, 25.9 and 23.0 us per cast (19, 67 and 259 casts a step), 22-34 us at either host speed. The
// validation jobs' bf16 traces agree in size: a cast 20-26 us traced, its backward node 23-37 us.
inline constexpr int64_t kAutocastCastHostNs = 25900;

}  // namespace gpudoctor
