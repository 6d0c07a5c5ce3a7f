#include "diagnosis/fixes/bf16.h"

#include "analysis/precision_kinds.h"

#include "diagnosis/fixes/fix_test_util.h"

namespace gpudoctor {
namespace {

TEST(Bf16Fix, ScalesFp32AndTf32GemmsToTheBf16RateOfTheCeilings) {
  const Fix& f = bf16Fix();
  ReplayEdits ed;
  EXPECT_FALSE(testing::applyFix(f, nullptr, nullptr, ed));  // no rates, no edit
  const Ceilings c = testing::h200();
  ASSERT_TRUE(testing::applyFix(f, &c, nullptr, ed));
  const double bf16 = c.peak(GemmPrecision::kBf16) * kBf16GemmEfficiency;
  EXPECT_DOUBLE_EQ(ed.kernel_scale[static_cast<size_t>(KernelClass::kGemmFp32Simt)],
                   c.peak(GemmPrecision::kFp32) / bf16 + kAutocastCastShare);
  EXPECT_DOUBLE_EQ(ed.kernel_scale[static_cast<size_t>(KernelClass::kGemmTf32)],
                   c.peak(GemmPrecision::kTf32) / bf16 + kAutocastCastShare);
  EXPECT_EQ(ed.kernel_floor_ns[static_cast<size_t>(KernelClass::kGemmFp32Simt)], kBf16GemmFloorNs);
  EXPECT_EQ(ed.kernel_scale[static_cast<size_t>(KernelClass::kElementwise)], kBf16ElementwiseScale);
  EXPECT_EQ(ed.kernel_scale[static_cast<size_t>(KernelClass::kOptimizer)], 1.0);  // FP32 master weights
  EXPECT_EQ(ed.kernel_scale[static_cast<size_t>(KernelClass::kGemmBf16)], 1.0);   // already BF16
  EXPECT_EQ(ed.autocast_cast_ns, kAutocastCastHostNs);
  EXPECT_LT(ed.fused_attention_fp32_scale, 1.0);
}

// Names from the lab's traces (validation/jobs regnet_y_fp32, resnext50_fp32, efficientnet_b0_fp32,
// gpt2_small_fp32; torch 2.11, cuDNN 9, H200).
TEST(Bf16Fix, TellsBatchNormsAndConvolutionsByTheirNames) {
  EXPECT_EQ(precisionKindOf("void cudnn::bn_fw_tr_1C11_singleread<float, 512, true, 1, 2, 0>(cudnn::bn_fw_tr_1C11_args<"
                            "float>)"),
            PrecisionKind::kBatchNorm);
  EXPECT_EQ(precisionKindOf("void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 32, true, 1>(float, float, float, "
                            "float, cudnnTensorStruct, float const*)"),
            PrecisionKind::kBatchNorm);
  EXPECT_EQ(precisionKindOf("sm80_xmma_dgrad_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x64x64_stage4_"
                            "warpsize1x2x1_g2_tensor16x8x8_t1r3s3_execute_kernel__5x_cudnn"),
            PrecisionKind::kConvolution);
  EXPECT_EQ(precisionKindOf("sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize256x32x32_"
                            "warpgroupsize1x1x1_g1_execute_segment_k_off_kernel__5x_cudnn"),
            PrecisionKind::kConvolution);
  EXPECT_EQ(precisionKindOf("_ZN17cutlass__5x_cudnn6KernelINS_4conv6kernel23ImplicitGemmConvolutionINS1_11threadblock"),
            PrecisionKind::kConvolution);
  EXPECT_EQ(precisionKindOf("void at::native::(anonymous namespace)::conv_depthwise2d_forward_kernel<3, float, int>("
                            "torch::headeronly::detail::GenericPackedTensorAccessor<float>)"),
            PrecisionKind::kConvolution);
  // cuDNN's layout transposes are their own kind (channels_last takes them); its other helpers and plain
  // matrix multiplies are none.
  EXPECT_EQ(precisionKindOf("void cudnn::engines_precompiled::nchwToNhwcKernel<float, float, float, true, true, "
                            "(cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nchw2nhwc_params_t<float>)"),
            PrecisionKind::kLayoutTranspose);
  EXPECT_EQ(precisionKindOf("void cudnn::cnn::reduce_wgrad_nchw_helper<float, float>(void*, void const*, float, int, "
                            "int)"),
            PrecisionKind::kNone);
  EXPECT_EQ(precisionKindOf("void cutlass::Kernel2<cutlass_80_simt_sgemm_128x256_8x4_nt_align1>(cutlass_80_simt_sgemm_"
                            "128x256_8x4_nt_align1::Params)"),
            PrecisionKind::kNone);
  EXPECT_EQ(precisionKindOf("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float, false>("
                            "int, float, float const*)"),
            PrecisionKind::kNone);
}

TEST(Bf16Fix, ConvolutionNetworksScalesAreSet) {
  ReplayEdits ed;
  const Ceilings c = testing::h200();
  ASSERT_TRUE(testing::applyFix(bf16Fix(), &c, nullptr, ed));
  EXPECT_EQ(ed.batch_norm_scale, kAutocastBatchNormScale);
  EXPECT_EQ(ed.convolution_scale, kBf16ConvolutionScale);
  EXPECT_GT(ed.batch_norm_scale, 1.0);  // bf16 inputs, FP32 statistics and casts: slower, not faster
  EXPECT_GE(kBf16ConvNetElementwiseScale, kBf16ElementwiseScaleMin);  // the finding's bound holds
}

// cuDNN's layout transposes move bf16 tensors under autocast: half the bytes, so half the time (they were
// kept whole, and regnet_y_fp32's bf16 predicted at 1.01x against 1.27x measured on an H100). A GPU-bound
// step of one transpose (real name, lab trace regnet_y_fp32, H100) and one elementwise kernel, 1 ms each.
TEST(Bf16Fix, LayoutTransposesMoveHalfTheBytes) {
  std::vector<RankTrace> v = testing::gpuBoundSteps(
      {"void cudnn::engines_precompiled::nchwToNhwcKernel<float, float, float, false, true, "
       "(cudnnKernelDataType_t)2>(cudnn::engines_precompiled::nchw2nhwc_params_t<float>, float const*, float*)",
       "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
       "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)"});
  auto run = analyzeRun(v, {});
  ASSERT_TRUE(run.ok());
  const Ceilings c = testing::h200();
  ReplayEdits ed;
  ASSERT_TRUE(testing::applyFix(bf16Fix(), &c, &run.value(), ed));
  EXPECT_EQ(ed.layout_transpose_scale, kBf16LayoutTransposeScale);
  ReplayModel m(run.value());
  const double before = m.replay().replayed.busy_ns, after = m.replay(ed).replayed.busy_ns;
  EXPECT_NEAR(before, 2e6, 1e3);
  // the transpose at half, the elementwise kernel at its class's scale (no convolutions: a transformer's)
  EXPECT_NEAR(after, (kBf16LayoutTransposeScale + kBf16ElementwiseScale) * 1e6, 1e3);
}

// cuDNN's generic tensor transforms reorder a convolution's operands in either layout: channels_last keeps
// them (regnet_y_fp32 on an H100: genericTranspose in NCHW, tensorTransformGeneric in channels_last), bf16
// halves them with the transposes. Real names from those traces.
TEST(Bf16Fix, CudnnTensorTransformsAreTheirOwnKind) {
  EXPECT_EQ(precisionKindOf("void cudnn::engines_precompiled::genericTranspose_kernel<float, float, float, true, "
                            "(cudnnKernelDataType_t)0>(float, cudnnTensorStruct, float const*, float, "
                            "cudnnTensorStruct, float*)"),
            PrecisionKind::kTensorTransform);
  EXPECT_EQ(precisionKindOf("void tensorTransformGeneric<float, float, float, true, false, false, "
                            "(cudnnKernelDataType_t)0>(cudnnTensorTransformStruct, "
                            "tensorTransformParams, int, unsigned long, float const*, float*, float, float)"),
            PrecisionKind::kTensorTransform);
  EXPECT_FALSE(
      isLayoutTransposeKernel("void tensorTransformGeneric<float, float, float, true, false, false, "
                              "(cudnnKernelDataType_t)0>(cudnnTensorTransformStruct, "
                              "tensorTransformParams, int, unsigned long, float const*, float*, float, float)"));
}

}  // namespace
}  // namespace gpudoctor
