#include "analysis/kernel_class.h"

#include <gtest/gtest.h>

#include <cmath>

#include "analysis/collectives.h"
#include "analysis/precision_kinds.h"
#include "model/comm_kernels.h"

namespace gpudoctor {
namespace {

// Prints the class name on failure instead of a number.
#define EXPECT_CLASS(expected, ...) EXPECT_EQ(kernelClassName(classifyKernel(__VA_ARGS__)), kernelClassName(expected))

TEST(ClassifyKernel, Nccl) {
  EXPECT_CLASS(KernelClass::kNccl, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "", "");
  // Pre-2.19 NCCL spelling, and with the "void " prefix some tools add.
  EXPECT_CLASS(KernelClass::kNccl, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", "", "");
  EXPECT_CLASS(KernelClass::kNccl, "void ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", "", "");
  // The launching op does not matter for NCCL.
  EXPECT_CLASS(KernelClass::kNccl, "ncclDevKernel_AllGather_RING_LL(x)", "aten::bmm", "c10::BFloat16");
  EXPECT_TRUE(isNcclKernel("ncclDevKernel_Generic"));
  EXPECT_FALSE(isNcclKernel("my_nccl_like_kernel"));
}

// Communication written as kernels of other libraries (model/comm_kernels.h) is communication, not
// compute, whatever operator launched it; names as their sources declare them.
TEST(ClassifyKernel, CommunicationKernelsThatAreNotNccl) {
  EXPECT_CLASS(KernelClass::kCommOther,
               "void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*, long*, float*, int*, int*)", "",
               "");
  EXPECT_CLASS(KernelClass::kCommOther, "void deep_ep::internode_ll::combine<false, 7168>(void*, void*)", "", "");
  EXPECT_CLASS(KernelClass::kCommOther, "deep_ep::intranode::notify_dispatch(int const*, int*, int)", "aten::empty",
               "");
  EXPECT_CLASS(KernelClass::kCommOther, "void nvshmemi_barrier_all_on_stream_kernel()", "", "");
  // As PyTorch 2.11 names it (testdata/cases/symm_mem).
  EXPECT_CLASS(KernelClass::kCommOther,
               "void (anonymous namespace)::one_shot_all_reduce_kernel<float, 16, -1>(float**, float*, float*, "
               "unsigned long, unsigned long, unsigned int**, unsigned long)",
               "symm_mem::one_shot_all_reduce", "");
  EXPECT_EQ(commKernelLibrary("void (anonymous namespace)::elementwise_kernel<float>(int)"), "");
  EXPECT_CLASS(KernelClass::kCommOther, "void vllm::cross_device_reduce_1stage<c10::BFloat16, 8>(vllm::RankData*)", "",
               "");
  EXPECT_TRUE(isCommunication(KernelClass::kCommOther));
  EXPECT_TRUE(isCommunication(KernelClass::kNccl));
  EXPECT_FALSE(isCommunication(KernelClass::kElementwise));
  EXPECT_EQ(commKernelLibrary("void deep_ep::intranode::combine<bf16>(x)"), "expert_parallel");
  EXPECT_EQ(commKernelLibrary("ncclDevKernel_Generic"), "nccl");
  // A name that merely mentions a library is not its kernel.
  EXPECT_EQ(commKernelLibrary("void at::native::deep_ep_like_elementwise(float*)"), "");
  EXPECT_EQ(commKernelLibrary("void deep_ep::layout::get_dispatch_layout<256, 32, 8>(long const*, int*)"), "");
  EXPECT_EQ(kernelClassName(KernelClass::kCommOther), "comm_other");
  // Every table row names its library and where its names come from.
  size_t n = 0;
  const CommKernelPattern* p = commKernelPatterns(&n);
  ASSERT_GE(n, 5u);
  for (size_t i = 0; i < n; ++i) {
    EXPECT_FALSE(p[i].library.empty());
    EXPECT_GE(p[i].prefix.size(), 5u);
    EXPECT_FALSE(p[i].note.empty());
  }
}

// Expert-parallel kernels by their structure, not one namespace: DeepSeek's training trace spells
// DeepEP's kernels dpsk::ep::internode:: (manifest: deepseek_h800_train), where they are 46 % of
// kernel time. Its layout kernel (dpsk::ep::cuda::get_dispatch_layout) computes.
TEST(ClassifyKernel, ExpertParallelKernelsByStructure) {
  EXPECT_CLASS(KernelClass::kCommOther,
               "void dpsk::ep::internode::combine<false, 8, __nv_bfloat16, 8, 2, 16, 24>(int4*, f"
               "loat*, bool const*, int4 const*, float const*, int4 const*, int4 const*, int cons"
               "t*, int const*, dpsk::ep::internode::SourceMeta const*, int const*, int const*, i"
               "nt const*, int, int, int, int, void*, int, int, void**, int, int, int, int, int*)",
               "", "");
  EXPECT_CLASS(KernelClass::kCommOther,
               "void dpsk::ep::internode::cached_notify<false>(int, int, int, int, int*, int, int, int const*, int "
               "const*, int*, void*, void**, int**, int, int, int, int*, bool, int)",
               "", "");
  EXPECT_CLASS(KernelClass::kCommOther,
               "void dpsk::ep::internode::notify_dispatch<false, 8>(int const*, long*, int, int c"
               "onst*, int*, int const*, int*, int, bool const*, int, int, int, int, int, int, in"
               "t, int*, int*, int*, int*, void*, void**, int**, int, int, int*, int)",
               "", "");
  EXPECT_TRUE(
      isExpertParallelKernel("void dpsk::ep::internode::dispatch<false, 8, false, 8>(int4*, float*, long*, floa"
                             "t*, dpsk::ep::internode::SourceMeta*, int4 const*, float const*, long const*, flo"
                             "at const*, int*, int*, int*, int*, int const*, int const*, int const*, int const*"
                             ", int, int, int, int, int, bool const*, void*, int, int, void**, int, int, int, i"
                             "nt, int*)"));
  EXPECT_FALSE(
      isExpertParallelKernel("void dpsk::ep::cuda::get_dispatch_layout<256, 32, 8>(long const*, int*, int*, int*, "
                             "bool*, int, int, int, int)"));
  // MoE routing outside a transport namespace is not communication (tracelens_mi300x_vllm_decode_full_replay).
  EXPECT_FALSE(isExpertParallelKernel("_combined_routing_compute"));
}

// ROCm's hipBLASLt / rocBLAS GEMMs (Tensile "Cijk_" names): precision from the type code after the
// two index tokens. MI300X: manifest tracelens_mi300x_sglang_qwen3_8b_prefilldecode (BBS) and
// tracelens_mi300x_falconsai (B_BS); FP32: hta_mi250_minitoy_train (SB), tracelens_mi300x_qwen1.5_0.5b (S_B).
TEST(ClassifyKernel, RocmTensileGemms) {
  EXPECT_CLASS(KernelClass::kGemmBf16,
               "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x192x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_"
               "CLR1_CADS0_DTLA0_DTLB0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMBSK_GLS0_ISA942_IU1_K1_"
               "LDSTI0_LBSPPA1024_LBSPPB256_LBSPPM0_LPA16_LPB16_LPM0_LRVW8_LWPMn1_MIAV0_MIWT8_6_MO40_NTn1_NTA0_NTB0_"
               "NTC0_NTD4_NTM0_NEPBS16_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO0_SRVW0_SSO0_SVW8_SK0_SKFTR0_"
               "SKXCCM0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA8_VWB2_WSGRA0_WSGRB0_WS64_WG32_8_1",
               "", "");
  EXPECT_CLASS(KernelClass::kGemmBf16,
               "Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT64x32x128_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_"
               "CLR1_CADS0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMB_GLS0_ISA942_IU1_K1_LBSPPA512_LBSPPB256_"
               "LBSPPM0_LPA16_LPB16_LPM0_LRVW8_LWPMn1_MIAV0_MIWT2_1_MO40_NTn1_NTA0_NTB0_NTC0_NTD0_NTM0_NEPBS16_NLCA1_"
               "NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO0_SRVW0_SSO0_SVW2_SK0_SKXCCM0_TLDS1_ULSGRO0_USL1_UIOFGRO0_"
               "USFGROn1_VSn1_VWA2_VWB1_WSGRA0_WSGRB0_WS64_WG32_8_1",
               "aten::addmm", "c10::BFloat16");
  EXPECT_CLASS(KernelClass::kGemmFp32Simt,
               "Cijk_Alik_Bljk_SB_Bias_AS_SAV_UserArgs_MT64x16x32_MI16x16x1_SN_LDSB0_AFC1_AFEM1_AFEM1_ASEM1_CLR1_"
               "CADS0_EPS0_GRVWA2_GRVWB2_GSUAMB_ISA90a_IU1_K1_LBSPPA128_LBSPPB128_LBSPPM0_LPA8_LPB8_LPM0_LRVW4_LWPMn1_"
               "MIAV0_MIWT1_1_MO40_NTn1_NTA0_NTB0_NTC0_NTD0_NTM0_NEPBS2_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO1_"
               "SRVW0_SSO0_SVW1_TLDS1_USFGROn1_VSn1_VWA1_VWB1_WSGRA1_WSGRB1_WS64_WG64_4_1",
               "aten::addmm", "float");
  // A batched GEMM issued by aten::bmm is a hand-written attention's, on ROCm as on CUDA.
  EXPECT_CLASS(KernelClass::kAttentionUnfused,
               "Cijk_Ailk_Bljk_S_B_Bias_HA_S_SAV_UserArgs_MT16x16x128_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_"
               "CLR1_CADS0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA2_GRVWB2_GSUAMB_GLS0_ISA942_IU1_K1_LBSPPA256_LBSPPB512_"
               "LBSPPM0_LPA16_LPB8_LPM0_LRVW4_LWPMn1_MIAV0_MIWT1_1_MO40_NTn1_NTA4_NTB0_NTC0_NTD4_NTM0_NEPBS16_NLCA1_"
               "NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO0_SRVW0_SSO0_SVW1_SK0_SKXCCM0_TLDS1_ULSGRO0_USL1_UIOFGRO0_"
               "USFGROn1_VSn1_VWA1_VWB1_WSGRA0_WSGRB0_WS64_WG16_4_4",
               "aten::bmm", "float");
}

// MoE matmuls with MXFP4 weights: Triton's _matmul_ogs on MI300X (manifest
// tracelens_mi300x_vllm_decode_full_replay) and TensorRT-LLM's bmm_ kernels on B200
// (tracelens_b200_eager), read by their activations' type.
TEST(ClassifyKernel, MoeMatmulsWithFp4Weights) {
  EXPECT_CLASS(KernelClass::kGemmBf16, "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1", "", "");
  EXPECT_CLASS(KernelClass::kGemmBf16, "_matmul_ogs_NNT_bf16xbf16xmxfp4_128x128x128x1_swiglu", "", "");
  EXPECT_CLASS(KernelClass::kGemmFp8,
               "bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256b_rM_TN_transOut_"
               "schedP2x1x2x3_biasM_bN_tma_tmaOpt_clmp_swiGlu_dynBatch_sm100f",
               "vllm::moe_forward", "c10::BFloat16");
  EXPECT_CLASS(KernelClass::kGemmBf16,
               "bmm_Bfloat16_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256b_rM_TN_"
               "transOut_schedP2x1x2x3_biasM_bN_tmaOpt_clmp_dynBatch_sm100f",
               "vllm::moe_forward", "c10::BFloat16");
  // The scatter after the matmul is not a GEMM (tracelens_mi300x_vllm_decode_full_replay).
  EXPECT_CLASS(KernelClass::kElementwise, "_finalize_matmul_scatter_bf16", "", "");
}

// cuDNN 7-era convolutions and batch norm on V100 / RTX 2080 Ti in FP32 (manifest
// hta_v100_resnet_ns, param_rtx2080ti_resnet, kineto_v100_resnet50): convolutions count as FP32
// GEMMs, batch norm as normalization, so a plain FP32 CNN shows its convolution time to the
// precision rules.
TEST(ClassifyKernel, OlderCudnnConvolutionsAndBatchNorm) {
  EXPECT_CLASS(KernelClass::kGemmFp32Simt, "cudnn_infer_volta_scudnn_128x64_relu_medium_nn_v1",
               "aten::cudnn_convolution", "");
  EXPECT_CLASS(KernelClass::kGemmFp32Simt, "cudnn_turing_scudnn_128x64_stridedB_splitK_xregs_large_nn_v1", "", "");
  // The 2021 Kineto sample's ResNet-50 (manifest kineto_v100_resnet50), without operators.
  EXPECT_CLASS(KernelClass::kGemmFp32Simt, "volta_scudnn_128x128_stridedB_splitK_medium_nn_v1", "", "");
  EXPECT_CLASS(KernelClass::kGemmFp32Simt,
               "void implicit_convolve_sgemm<float, float, 128, 6, 7, 3, 3, 5, 1, false, true, true>(int, int, int, "
               "float const*, int, float*, float const*, kernel_conv_params, unsigned long long, int, float, float, "
               "int, float const*, float const*, bool, int, int)",
               "", "");
  EXPECT_CLASS(
      KernelClass::kGemmFp32Simt,
      "void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int, int, float const*, int, "
      "float const*, int, float*, kernel_grad_params, unsigned long long, int, unsigned long long, int, float, "
      "int, int, int)",
      "aten::convolution_backward", "");
  EXPECT_CLASS(
      KernelClass::kGemmFp32Simt,
      "void wgrad_alg0_engine<float, 128, 6, 7, 3, 3, 5, false, 512>(int, int, int, float const*, int, float*, "
      "float const*, kernel_grad_params, unsigned long long, int, float, int, int, int, int)",
      "aten::convolution_backward", "");
  EXPECT_CLASS(KernelClass::kGemmFp32Simt,
               "void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>(cudnn::winograd_nonfused::"
               "WinogradDataParams<float, float>)",
               "aten::cudnn_convolution", "");
  EXPECT_CLASS(KernelClass::kNormalization,
               "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 128, true, 1, true>(cudnnTensorStruct, float "
               "const*, cudnnTensorStruct, float*, float const*, float const*, float, float, float*, float*, float*, "
               "float*, float, float)",
               "aten::cudnn_batch_norm", "");
  EXPECT_CLASS(KernelClass::kNormalization,
               "void cudnn::bn_bw_1C11_singleread<float, 512, true, 1, 2, 0>(cudnn::bn_bw_1C11_args<float>)",
               "aten::cudnn_batch_norm_backward", "");
  // Layout transposes around a convolution are copies (hta_a100_nccl_resnet); pooling is a reduction.
  EXPECT_CLASS(KernelClass::kCopy,
               "void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true, (cudnnKernelDataType_t)2>(cudnn::"
               "ops::nchw2nhwc_params_t<float>, float const*, float*)",
               "aten::convolution_backward", "");
  EXPECT_CLASS(
      KernelClass::kReduction,
      "void at::native::(anonymous namespace)::max_pool_backward_nchw<float, float>(float const*, long const*, "
      "int, long, long, long, int, int, int, int, int, int, int, int, int, int, float*)",
      "aten::max_pool2d_with_indices_backward", "float");
}

// On Ampere an FP32 GEMM on tensor cores is TF32: CUTLASS's s1688 tiles on float data (manifest
// hta_a100_negative_queue), whatever the operator's dtype says.
TEST(ClassifyKernel, Tf32TensorOpTilesOnFloat) {
  const char* s1688 =
      "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4>(cutlass_80_tensorop_s1688gemm_64x64_"
      "16x6_nn_align4::Params)";
  EXPECT_CLASS(KernelClass::kGemmTf32, s1688, "", "");
  EXPECT_CLASS(KernelClass::kGemmTf32, s1688, "aten::mm", "float");
  // cuDNN's CUTLASS convolutions spell the type cutlass::tfloat32_t in their mangled names: an FP32
  // ResNet on the H200 (testdata/whatif/resnet_fp32__base), TF32 by PyTorch's cuDNN default.
  const char* tfloat32 =
      "_ZN17cutlass__5x_cudnn6KernelINS_4conv6kernel23ImplicitGemmConvolutionINS1_11threadblock22ImplicitGemmMu"
      "ltistageINS_4gemm9GemmShapeILi64ELi64ELi32EEENS4_52Conv2dWgradOutputGradientTileAccessIteratorOptimizedI"
      "NS_11MatrixShapeILi64ELi32EEENS_10tfloat32_tENS_9transform29PitchLinearWarpRakedThreadMapINS_16PitchLine"
      "arShapeILi64ELi32EEELi128ENSF_ILi8ELi4EEELi4EEENS_12AlignedArrayISC_Li4ELi16EEEEENSD_11threadblock25Regu"
      "larTileAccessIteratorISB_SC_NS_6layout40ColumnMajorTensorOpMultiplicandCongruousILi32ELi32EEELi1ESI_Li16"
      "EEELNS_4arch14CacheOperation4KindE0ENS4_48Conv2dWgradActivationTileAccessIteratorOptimizedINSA_ILi32ELi6"
      "4EEESC_SI_SK_EENSN_ISW_SC_NSO_37RowMajorTensorOpMultiplicandCongruousILi32ELi32EEELi0ESI_Li16EEELSU_0ENS"
      "6_11threadblock9MmaPolicyINS6_4warp11MmaTensorOpINS7_ILi32ELi32ELi32EEESC_SQ_SC_SZ_fNSO_8RowMajorENS13_1"
      "7MmaTensorOpPolicyINSS_3MmaINS7_ILi16ELi8ELi8EEELi32ESC_S16_SC_NSO_11ColumnMajorEfS16_NSS_13OpMultiplyAd"
      "dEEENSA_ILi1ELi1EEEEELi1ELb0EbEENSA_ILi0ELi0EEES1G_Li1EEELi5EbEENS_8epilogue11threadblock8EpilogueIS8_S1"
      "F_Li1ENS1K_22PredicatedTileIteratorINS1K_26OutputTileOptimalThreadMapINS1K_15OutputTileShapeILi64ELi8ELi"
      "2ELi1ELi1EEENS1O_ILi1ELi4ELi1ELi1ELi4EEELi128ELi4ELi32EEEfLb0ENSO_9NoPermuteELb0EEENS1J_4warp24FragmentI"
      "teratorTensorOpIS15_S19_fNS_5ArrayIfLi4ELb1EEES16_EENS1U_20TileIteratorTensorOpIS15_S19_fS16_EENS1K_18Sh"
      "aredLoadIteratorINS1R_18CompactedThreadMapEfLi16EEENS1J_6thread17LinearCombinationIfLi4EffLNS24_9ScaleTy"
      "pe4KindE0ELNS_15FloatRoundStyleE2EEENSA_ILi0ELi8EEELi2ELi1EEENS11_30GemmIdentityThreadblockSwizzleILi4EE"
      "ELNS1_8OperatorE2ENS1_17Conv2dProblemSizeELNS1_9GroupModeE0EEEEEvNT_6ParamsE";
  EXPECT_CLASS(KernelClass::kGemmTf32, tfloat32, "aten::convolution_backward", "float");
  // The same tile on bf16 data says so (tracelens_h100_falconsai's cuDNN fprop).
  EXPECT_CLASS(KernelClass::kGemmBf16,
               "void cutlass__5x_cudnn::Kernel<cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_32x4_nhwc_"
               "align8>(cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_32x4_nhwc_align8::Params)",
               "aten::cudnn_convolution", "c10::BFloat16");
}

// MIOpen, CK and the ROCm serving kernels (manifest tracelens_mi300x_xdit_flux_aiter_sage,
// tracelens_mi300x_resnet_act_ckpt, tracelens_mi300x_normalization, tracelens_mi210_gpu_only,
// tracelens_mi300x_sglang_qwen3_8b_decode, tracelens_mi300x_qwen1.5_0.5b).
TEST(ClassifyKernel, RocmLibraryKernels) {
  EXPECT_CLASS(KernelClass::kGemmBf16,
               "igemm_fwd_gtcx3_nhwc_bf16_bx0_ex1_bt128x128x32_wt32x32x8_ws1x1_wr2x2_ta1x8x2x1_1x4x1x64_tb1x8x2x1_"
               "1x4x1x64_gkgs",
               "aten::miopen_convolution", "c10::BFloat16");
  EXPECT_CLASS(KernelClass::kNormalization, "MIOpenBatchNormFwdTrainSpatialMeanVariance", "aten::miopen_batch_norm",
               "float");
  EXPECT_CLASS(KernelClass::kElementwise, "SubTensorOpWithScalar1d", "aten::convolution_backward", "c10::BFloat16");
  EXPECT_CLASS(KernelClass::kCopy, "Im2d2Col_v2", "aten::miopen_convolution", "c10::BFloat16");
  EXPECT_CLASS(KernelClass::kCopy, "batched_transpose_256x4_half", "", "");
  EXPECT_CLASS(KernelClass::kAttentionFused, "attn_fwd", "", "");
  EXPECT_CLASS(KernelClass::kAttentionFused, "sage_fwd", "Torch-Compiled Region: 0/0", "");
  EXPECT_CLASS(KernelClass::kElementwise,
               "_ZN7sgl_hip10activation18act_and_mul_kernelI14__hip_bfloat16TnPFT_RKS3_EXadL_Z4siluIS2_ES3_S5_EEEEvPS3_"
               "PS4_i",
               "", "");
  EXPECT_CLASS(KernelClass::kCopy,
               "void (anonymous namespace)::store_kvcache<2048l, 4, false, long>((anonymous namespace)::"
               "StoreKVCacheParams)",
               "", "");
  // Group norm's arithmetic kernels are named for the arithmetic: the operator tells.
  EXPECT_CLASS(KernelClass::kNormalization,
               "void at::native::(anonymous namespace)::ComputeFusedParamsCUDAKernel<float>(long, long, long, float "
               "const*, float const*, float const*, float const*, at::AccumulateType<float, true>::type*, "
               "at::AccumulateType<float, true>::type*)",
               "aten::native_group_norm", "float");
}

// Inductor's kernels list the operators they fuse: an attention named there is not a fused
// attention kernel (manifest tracelens_mi300x_xdit_sd35).
TEST(ClassifyKernel, InductorKernelsAreNotAttentionByTheirFusedOps) {
  EXPECT_CLASS(KernelClass::kCopy, "triton_poi_fused__scaled_dot_product_flash_attention_cat_transpose_view_10",
               "triton_poi_fused__scaled_dot_product_flash_attention_cat_transpose_view_10", "c10::BFloat16");
}

// Arguments are not the kernel's name: FBGEMM's embedding kernels take an fbgemm_gpu::FixedDivisor
// (manifest hta_a100_trace_diff_control), which is no GEMM; casts to FP8 are copies (deepseek_h800_train).
TEST(ClassifyKernel, ArgumentTypesDoNotClassify) {
  EXPECT_CLASS(KernelClass::kElementwise,
               "void split_embedding_codegen_forward_unweighted_kernel<float, float, float, long,"
               " 2ul>(at::GenericPackedTensorAccessor<float, 1ul, at::RestrictPtrTraits, long>, a"
               "t::GenericPackedTensorAccessor<float, 1ul, at::RestrictPtrTraits, long>, at::Gene"
               "ricPackedTensorAccessor<float, 2ul, at::RestrictPtrTraits, long>, at::GenericPack"
               "edTensorAccessor<int, 1ul, at::RestrictPtrTraits, int>, at::GenericPackedTensorAc"
               "cessor<long, 1ul, at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<in"
               "t, 1ul, at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<long, 1ul, a"
               "t::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<long, 1ul, at::Restri"
               "ctPtrTraits, int>, long, at::GenericPackedTensorAccessor<int, 1ul, at::RestrictPt"
               "rTraits, int>, at::GenericPackedTensorAccessor<float, 2ul, at::RestrictPtrTraits,"
               " int>)",
               "", "");
  EXPECT_TRUE(
      isGemmKernelName("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4>(cutlass_"
                       "80_tensorop_s1688gemm_64x64_16x6_nn_align4::Params)"));
  EXPECT_FALSE(
      isGemmKernelName("void bounds_check_indices_kernel<long, false>(at::GenericPackedTensorAccessor<lon"
                       "g, 1ul, at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<long, 1ul, a"
                       "t::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<long, 1ul, at::Restri"
                       "ctPtrTraits, int>, int const*, long, at::GenericPackedTensorAccessor<long, 1ul, a"
                       "t::RestrictPtrTraits, int>, fbgemm_gpu::FixedDivisor)"));
  EXPECT_CLASS(KernelClass::kCopy,
               "void cuda::per_token_cast_to_fp8_with_channels<__nv_bfloat16, 128, false, 128, false>(__nv_bfloat16 "
               "const*, int, unsigned char*, float*, int, int, int, int, bool, float, __nv_fp8_interpretation_t)",
               "", "");
}

TEST(ClassifyKernel, HopperGemmTakesPrecisionFromTheOperator) {
  // nvjet names do not spell the precision: the op's input dtype decides.
  const char* nvjet = "nvjet_sm90_tst_128x128_64x6_2x1_v_bz_NNT";
  EXPECT_CLASS(KernelClass::kGemmBf16, nvjet, "aten::mm", "c10::BFloat16");
  EXPECT_CLASS(KernelClass::kGemmFp16, nvjet, "aten::mm", "c10::Half");
  // FP32 inputs and no "tf32" in the name: the plain FP32 path ("tst" in nvjet names is not TF32).
  EXPECT_CLASS(KernelClass::kGemmFp32Simt, nvjet, "aten::mm", "float");
  // Without an operator's dtype, the name's type letters: t bf16, h fp16 (names from the lab's H200
  // traces: bf16 autocast, cuDNN's FP16 RNN); others (s, e, q) stay unknown.
  EXPECT_CLASS(KernelClass::kGemmBf16, nvjet, "", "");
  EXPECT_CLASS(KernelClass::kGemmBf16, "nvjet_sm90_tss_192x144_64x4_2x1_v_bz_coopA_NNT", "", "");
  EXPECT_CLASS(KernelClass::kGemmFp16, "nvjet_sm90_hsh_128x256_64x4_1x2_h_bz_coopA_NNN", "", "");
  EXPECT_CLASS(KernelClass::kGemmOther, "nvjet_sm90_sss_128x128_64x4_1x2_h_bz_NNN", "", "");
}

TEST(ClassifyKernel, Fp32SimtGemms) {
  EXPECT_CLASS(KernelClass::kGemmFp32Simt,
               "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_"
               "execute_kernel__51_cublasLt",
               "aten::mm", "float");
  EXPECT_CLASS(KernelClass::kGemmFp32Simt,
               "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x256_8x4_nt_align1>(cutlass_80_simt_sgemm_128x256_8x4_"
               "nt_align1::Params)",
               "aten::addmm", "float");
  EXPECT_CLASS(KernelClass::kGemmFp32Simt, "ampere_sgemm_128x64_nn", "aten::mm", "float");
}

TEST(ClassifyKernel, GemmPrecisionFromTheName) {
  EXPECT_CLASS(KernelClass::kGemmBf16, "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_nn", "aten::mm", "");
  EXPECT_CLASS(KernelClass::kGemmTf32, "sm80_xmma_gemm_tf32f32_tf32f32_f32_nn_n_tilesize128x128x16", "", "");
  EXPECT_CLASS(KernelClass::kGemmFp16, "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn", "", "");
  EXPECT_CLASS(KernelClass::kGemmFp8, "sm90_xmma_gemm_e4m3e4m3_e4m3f32_f32_tn_n_tilesize128x128x64", "", "");
  // The name wins over the operator's dtype.
  EXPECT_CLASS(KernelClass::kGemmFp32Simt, "ampere_sgemm_128x64_nn", "aten::mm", "c10::BFloat16");
}

TEST(ClassifyKernel, Fp32FusedAttention) {
  // PyTorch's memory-efficient kernels in FP32 (the what-if validation jobs' SDPA in FP32, H200).
  EXPECT_TRUE(isFp32FusedAttentionKernel(
      "fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<float, "
      "cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)"));
  EXPECT_TRUE(isFp32FusedAttentionKernel(
      "fmha_cutlassB_f32_aligned_64x64_k64_sm80(PyTorchMemEffAttention::AttentionBackwardKernel)"));
  EXPECT_FALSE(
      isFp32FusedAttentionKernel("fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel)"));
  // cuDNN's fused attention has no FP32 kernel (its names say f16 for bf16 too).
  EXPECT_FALSE(
      isFp32FusedAttentionKernel("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64"));
  EXPECT_FALSE(
      isFp32FusedAttentionKernel("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, "
                                 "false, false, cutlass::bfloat16_t> >(pytorch_flash::Flash_fwd_params)"));
}

TEST(ClassifyKernel, Attention) {
  EXPECT_CLASS(KernelClass::kAttentionFused,
               "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_4x1x1_cga1x1x1_kernel0_0",
               "", "");
  EXPECT_CLASS(KernelClass::kAttentionFused,
               "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, "
               "cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, false, false, "
               "false, true, true, false, false>(pytorch_flash::Flash_fwd_params)",
               "aten::_flash_attention_forward", "c10::BFloat16");
  // A GEMM issued by a fused-attention op is attention, not a GEMM.
  EXPECT_CLASS(KernelClass::kAttentionFused, "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT",
               "aten::_scaled_dot_product_cudnn_attention", "c10::BFloat16");
  // Hand-written attention: bmm GEMMs and the softmax between them.
  EXPECT_CLASS(KernelClass::kAttentionUnfused, "nvjet_sm90_tst_128x128_64x6_2x1_v_bz_NNT", "aten::bmm",
               "c10::BFloat16");
  EXPECT_CLASS(KernelClass::kAttentionUnfused, "ampere_sgemm_128x64_nn", "aten::baddbmm", "float");
  const char* softmax =
      "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, false>(float*, float const*, "
      "int, int, int, bool const*, int, bool)";
  EXPECT_CLASS(KernelClass::kAttentionUnfused, softmax, "aten::_softmax", "float");
  // Without the softmax op the same kernel is a plain reduction.
  EXPECT_CLASS(KernelClass::kReduction, softmax, "", "");
}

TEST(ClassifyKernel, NonGemmClasses) {
  EXPECT_CLASS(KernelClass::kNormalization,
               "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float, false>(int, float, "
               "float const*, float const*, float const*, float*, float*, float*)",
               "aten::native_layer_norm", "float");
  EXPECT_CLASS(KernelClass::kOptimizer,
               "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
               "namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, "
               "(at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, bool, float*, "
               "float*>(at::native::(anonymous namespace)::TensorListMetadata<4>, ...)",
               "aten::_fused_adam_", "float");
  EXPECT_CLASS(KernelClass::kOptimizer,
               "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
               "namespace)::TensorListMetadata<2>, ...>(...)",
               "", "");
  EXPECT_CLASS(KernelClass::kElementwise,
               "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
               "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
               "aten::add", "float");
  EXPECT_CLASS(KernelClass::kReduction,
               "void at::native::reduce_kernel<128, 4, at::native::ReduceOp<float, "
               "at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()("
               "at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4, 4> >(at::native::ReduceOp<"
               "float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()("
               "at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4, 4>)",
               "aten::sum", "float");
  EXPECT_CLASS(KernelClass::kCopy,
               "void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 2, 128, 1>(...)",
               "aten::cat", "float");
  EXPECT_CLASS(KernelClass::kOther, "my_custom_kernel", "", "");
}

// Depthwise convolutions that are not GEMMs: PyTorch's native kernels (the lab's MobileNetV3 and
// EfficientNet traces, PyTorch 2.11, argument lists cut) and cuDNN's runtime-compiled one
// (efficientnet_jpeg_workers2, channels last, launched by aten::cudnn_convolution).
TEST(ClassifyKernel, DirectConvolutions) {
  EXPECT_CLASS(KernelClass::kConvDirect,
               "void at::native::(anonymous namespace)::conv_depthwise2d_forward_kernel<3, float, int>("
               "torch::headeronly::detail::GenericPackedTensorAccessor<...>, bool, int, int)",
               "", "");
  EXPECT_CLASS(KernelClass::kConvDirect,
               "void at::native::(anonymous namespace)::conv_depthwise2d_grad_weight_kernel<float, unsigned int>("
               "torch::headeronly::detail::GenericPackedTensorAccessor<...>, int, int)",
               "", "");
  EXPECT_CLASS(KernelClass::kConvDirect,
               "void at::native::(anonymous namespace)::conv_depthwise2d_backward_kernel<5, 2, float, int>(...)", "",
               "");
  EXPECT_CLASS(KernelClass::kConvDirect, "conv2d_c1_k1_nhwc_specialized", "aten::cudnn_convolution", "float");
  EXPECT_EQ(kernelClassName(KernelClass::kConvDirect), "conv_direct");
}

// Kernels of the lab's traces that were `other` (PyTorch 2.11 on an H200; argument lists cut): torch.roll
// (swin_tiny_bf16_healthy) moves data; cuDNN's RNN cell (lstm_lm_fp32, gru_lm_fp32) and EmbeddingBag's
// backward (dlrm_embeddingbag) are pointwise. "unrolled_elementwise_kernel" is not a roll.
TEST(ClassifyKernel, RollRnnCellAndEmbeddingBagBackward) {
  EXPECT_CLASS(KernelClass::kCopy,
               "void at::native::roll_cuda_kernel<c10::BFloat16>(c10::BFloat16 const*, c10::BFloat16*, long, long, "
               "long, long, long, long)",
               "aten::roll", "c10::BFloat16");
  EXPECT_CLASS(KernelClass::kElementwise,
               "void elemWiseRNNcell<float, float, float, (cudnnRNNMode_t)2, (cudnnRNNBiasMode_t)2>(int, int, int)",
               "aten::_cudnn_rnn", "float");
  EXPECT_CLASS(KernelClass::kElementwise,
               "void at::native::(anonymous namespace)::compute_grad_weight_bags<float, long>(long const*, float "
               "const*)",
               "aten::_embedding_bag_backward", "float");
  EXPECT_CLASS(KernelClass::kElementwise,
               "void at::native::unrolled_elementwise_kernel<at::native::CUDAFunctor_add<float>, std::array<char*, "
               "3ul>, 4, TrivialOffsetCalculator<2, unsigned int> >(int)",
               "aten::add", "float");
}

// cuDNN's layout transforms around NHWC grouped convolutions, names verbatim from the lab's channels_last
// regnet_y and resnext50 traces (H200 and H100, PyTorch 2.11): data movement. tensorTransformGeneric was
// a reduction ("tenSORTransform") and convertTensor_kernel `other`; a real sort stays a reduction.
TEST(ClassifyKernel, CudnnLayoutTransformsAreCopies) {
  EXPECT_CLASS(KernelClass::kCopy,
               "void tensorTransformGeneric<float, float, float, true, false, false, (cudnnKernelDataType_t)0>("
               "cudnnTensorTransformStruct, tensorTransformParams, int, unsigned long, float const*, float*, float, "
               "float)",
               "aten::convolution_backward", "float");
  EXPECT_CLASS(KernelClass::kCopy,
               "void cudnn::engines_precompiled::convertTensor_kernel<float, float, float, (cudnnKernelDataType_t)2>("
               "float, float const*, float, float*, unsigned long)",
               "aten::cudnn_convolution", "float");
  EXPECT_CLASS(KernelClass::kCopy,
               "void nhwcSliceCKernel<float, float, float, true, (cudnnKernelDataType_t)2>(cudnn::reduced_divisor, "
               "int, int, int, float const*, float*, float, float)",
               "aten::cudnn_convolution", "float");
  EXPECT_CLASS(KernelClass::kReduction,
               "void at::native::bitonicSortKVInPlace<2, -1, 16, 16, float, long, at::native::LTOp<float, true>, "
               "unsigned int>(at::cuda::detail::TensorInfo<float, unsigned int>)",
               "aten::sort", "float");
}

// aten::_foreach_copy_ runs the multi-tensor kernel with a Copy functor: a copy, not an optimizer's
// update (a decode step without an optimizer was advised fused AdamW for these two). Names and
// operator verbatim from testdata/wild/MANIFEST.json: tracelens_mi300x_sglang_qwen3_8b_decode.
TEST(ClassifyKernel, ForeachCopyIsACopyNotAnOptimizer) {
  EXPECT_CLASS(KernelClass::kCopy,
               "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
               "namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::UnaryOpFunctor<long, 2, 1, 1>, "
               "at::native::Copy<long, long> >(at::native::(anonymous namespace)::TensorListMetadata<2>, "
               "at::native::(anonymous namespace)::UnaryOpFunctor<long, 2, 1, 1>, at::native::Copy<long, long>)",
               "aten::_foreach_copy_", "");
  // Without its operator (a trace without CPU ops), the Copy functor in the template tells.
  EXPECT_CLASS(KernelClass::kCopy,
               "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
               "namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::CopyFunctor<int, long, 2, 1, 1>, "
               "at::native::Copy<int, long> >(at::native::(anonymous namespace)::TensorListMetadata<2>, "
               "at::native::(anonymous namespace)::CopyFunctor<int, long, 2, 1, 1>, at::native::Copy<int, long>)",
               "", "");
}

TEST(KernelClass, NamesAndGemmPredicate) {
  EXPECT_EQ(kernelClassName(KernelClass::kGemmBf16), "gemm_bf16");
  EXPECT_EQ(kernelClassName(KernelClass::kAttentionUnfused), "attention_unfused");
  EXPECT_EQ(kernelClassName(KernelClass::kNccl), "nccl");
  EXPECT_TRUE(isGemm(KernelClass::kGemmFp32Simt));
  EXPECT_TRUE(isGemm(KernelClass::kGemmOther));
  EXPECT_FALSE(isGemm(KernelClass::kAttentionFused));
  EXPECT_FALSE(isGemm(KernelClass::kNccl));
}

TEST(Collectives, BusFactor) {
  EXPECT_DOUBLE_EQ(busFactor("allreduce", 2), 1.0);
  EXPECT_DOUBLE_EQ(busFactor("allreduce", 8), 1.75);
  EXPECT_DOUBLE_EQ(busFactor("all_reduce", 8), 1.75);  // underscores and case do not matter
  EXPECT_DOUBLE_EQ(busFactor("AllReduce", 4), 1.5);
  EXPECT_DOUBLE_EQ(busFactor("allgather", 8), 0.875);
  EXPECT_DOUBLE_EQ(busFactor("reduce_scatter", 4), 0.75);
  EXPECT_DOUBLE_EQ(busFactor("broadcast", 8), 1.0);
  EXPECT_DOUBLE_EQ(busFactor("send", 2), 1.0);
  EXPECT_DOUBLE_EQ(busFactor("allreduce", 1), 0.0);  // one rank moves nothing
  EXPECT_DOUBLE_EQ(busFactor("allreduce", 0), 0.0);
}

// EXPOSES BUG: ProcessGroupNCCL records the collective name "_allgather_base" for
// all_gather_into_tensor (what FSDP and most all-gathers use), "_reduce_scatter_base" for
// reduce_scatter_tensor and "allgather_into_tensor_coalesced" for the coalesced form. busFactor
// strips underscores to "allgatherbase" / "reducescatterbase" / "allgatherintotensorcoalesced",
// none of which is in its list, so it falls through to 1.0 and busbw comes out n/(n-1) too high.
TEST(Collectives, BusFactorOfNamesProcessGroupNcclRecords) {
  EXPECT_DOUBLE_EQ(busFactor("_allgather_base", 8), 0.875);
  EXPECT_DOUBLE_EQ(busFactor("_reduce_scatter_base", 8), 0.875);
  EXPECT_DOUBLE_EQ(busFactor("allgather_into_tensor_coalesced", 8), 0.875);
  EXPECT_DOUBLE_EQ(busFactor("_allgather_base", 2), 0.5);
}

TEST(Collectives, DtypeBytes) {
  EXPECT_EQ(dtypeBytes("Float"), 4);
  EXPECT_EQ(dtypeBytes("BFloat16"), 2);
  EXPECT_EQ(dtypeBytes("Half"), 2);
  EXPECT_EQ(dtypeBytes("Double"), 8);
  EXPECT_EQ(dtypeBytes("Long"), 8);
  EXPECT_EQ(dtypeBytes("Byte"), 1);
  EXPECT_EQ(dtypeBytes("Float8_e4m3fn"), 1);
  EXPECT_EQ(dtypeBytes("ComplexDouble"), 16);
  EXPECT_EQ(dtypeBytes("Mystery"), 0);
  // Older traces' "Input type": C++ type names.
  EXPECT_EQ(dtypeBytes("float"), 4);
  EXPECT_EQ(dtypeBytes("long int"), 8);
  EXPECT_EQ(dtypeBytes("c10::BFloat16"), 2);
  EXPECT_EQ(dtypeBytes("c10::Half"), 2);
  EXPECT_EQ(dtypeBytes("unsigned char"), 1);
  EXPECT_EQ(dtypeBytes("c10::complex<float>"), 8);
  EXPECT_EQ(dtypeBytes(""), 0);
}

TEST(Collectives, NcclKernelCollectiveWithoutArgs) {
  // A kernel without PyTorch's arguments is named by its kind (was "(no args)"), its size unknown.
  EXPECT_EQ(ncclKernelCollective("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"),
            "allreduce");
  EXPECT_EQ(ncclKernelCollective("ncclDevKernel_ReduceScatter_Sum_bf16_RING_SIMPLE(x)"), "reducescatter");
  EXPECT_EQ(ncclKernelCollective("ncclDevKernel_SendRecv(x)"), "sendrecv");
  EXPECT_EQ(ncclKernelCollective("ncclKernel_AllGather_RING_LL_Sum_float(x)"), "allgather");
  EXPECT_EQ(ncclKernelCollective("ncclDevKernel_Generic(x)"), "");
  EXPECT_EQ(ncclKernelCollective("my_gemm"), "");
}

TEST(Collectives, NcclKernelVariant) {
  EXPECT_EQ(ncclKernelVariant("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"), "RING_LL");
  EXPECT_EQ(ncclKernelVariant("ncclDevKernel_AllGather_RING_LL128(x)"), "RING_LL128");
  EXPECT_EQ(ncclKernelVariant("ncclDevKernel_ReduceScatter_Sum_bf16_RING_SIMPLE(x)"), "RING_SIMPLE");
  EXPECT_EQ(ncclKernelVariant("ncclDevKernel_AllReduce_Sum_bf16_NVLS_TREE_SIMPLE(x)"), "NVLS_TREE_SIMPLE");
  EXPECT_EQ(ncclKernelVariant("ncclDevKernel_AllReduce_Sum_f32_TREE_LL(x)"), "TREE_LL");
  EXPECT_EQ(ncclKernelVariant("ncclDevKernel_SendRecv(x)"), "");
  EXPECT_EQ(ncclKernelVariant("ncclDevKernel_Generic(x)"), "");
  EXPECT_EQ(ncclKernelVariant("my_gemm"), "");
}

// EXPOSES BUG: NCCL before 2.19 names kernels <coll>_<ALGO>_<PROTO>_<op>_<type>, e.g.
// "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)" (as recorded in PyTorch traces of that era;
// isNcclKernel accepts the ncclKernel_ prefix for them). ncclKernelVariant compares everything after
// "_RING_" with the protocol names as a whole ("LL_Sum_float" != "LL"), so it drops the protocol and
// returns "RING"; the kernel does name "RING_LL".
TEST(Collectives, NcclKernelVariantOfPre219KernelNames) {
  EXPECT_EQ(ncclKernelVariant("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"), "RING_LL");
  EXPECT_EQ(ncclKernelVariant("ncclKernel_AllReduce_RING_LL128_Sum_bf16(ncclWorkElem)"), "RING_LL128");
  EXPECT_EQ(ncclKernelVariant("ncclKernel_AllGather_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"),
            "RING_SIMPLE");
}

// Names from real traces (the lab's H200 bf16 traces of GPT-2, RoBERTa and BERT; TraceLens's H100
// OWLv2; HTA's A100 TF32 traces): the fallback kernels cuBLAS runs for a dimension that is not a
// multiple of 8 (16-bit) or 4 (TF32), against the aligned kernels of the same traces.
// Layout transposes around NCHW convolutions, as the libraries name them in real traces: cuDNN 8-9
// (hta_a100_nccl_resnet, lab unet_diffusion_fp32), MIOpen on MI210 and MI300X (tracelens_mi210_gpu_only,
// tracelens_mi300x_resnet_act_ckpt). DeepSeek's FP8 operand transpose (deepseek_h800_train) and cuBLAS's
// transpose parameters are not.
TEST(KernelNames, LayoutTransposesAroundConvolutions) {
  for (const char* n :
       {"void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true, (cudnnKernelDataType_t)2>(cudnn::ops::"
        "nchw2nhwc_params_t<float>, float const*, float*)",
        "void cudnn::engines_precompiled::nhwcToNchwKernel<__nv_bfloat16, __nv_bfloat16, float, true, false, "
        "(cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nhwc2nchw_params_t<float>, __nv_bfloat16 const*, "
        "__nv_bfloat16*)",
        "batched_transpose_16x64_pack_1x4_ediv_1x2_half", "batched_transpose_32x32_half"})
    EXPECT_TRUE(isLayoutTransposeKernel(n)) << n;
  for (const char* n : {"void cuda::batched_transpose<512, 128, 1, 1>(unsigned char const*, unsigned char*, int, int, "
                        "int)",
                        "void scal_kernel<float, float, 1, true, 6, 5, 5, 3>(cublasTransposeParams<float>, float "
                        "const*, float*, float const*)",
                        "igemm_fwd_gtcx3_nhwc_bf16_bx0_ex1_bt128x128x32_wt32x32x8_ws1x1_wr2x2_ta1x8x2x1_1x4x1x64_"
                        "tb1x8x2x1_1x4x1x64_gkgs"})
    EXPECT_FALSE(isLayoutTransposeKernel(n)) << n;
}

TEST(KernelNames, MisalignedGemmsByTheirOperandAlignment) {
  for (const char* n : {
           "void cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_128x128_tn_align1>("
           "cutlass_75_tensorop_bf16_s1688gemm_bf16_128x128_tn_align1::Params)",
           "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_256x128_64x3_tn_align2>("
           "cutlass_80_tensorop_bf16_s16816gemm_bf16_256x128_64x3_tn_align2::Params)",
           "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align2>("
           "cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align2::Params)",
           "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x128_32x3_nn_align1>("
           "cutlass_80_tensorop_s1688gemm_256x128_32x3_nn_align1::Params)",
       })
    EXPECT_NE(misalignedGemmKind(n), PrecisionKind::kNone) << n;
  EXPECT_EQ(
      gemmOperandAlignmentBytes("void cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_128x128_tn_align1>("
                                "cutlass_75_tensorop_bf16_s1688gemm_bf16_128x128_tn_align1::Params)"),
      2);
  for (const char* n : {
           "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4>("
           "cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4::Params)",  // TF32, 16 bytes
           "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_tn_align8>("
           "cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_tn_align8::Params)",
           "nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_TNT",  // cuBLAS's own: the name does not say
           "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x256_8x4_nt_align1>("
           "cutlass_80_simt_sgemm_128x256_8x4_nt_align1::Params)",  // FP32 SIMT: no tensor cores to miss
           "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_"
           "execute_kernel__5x_cublas",
       })
    EXPECT_EQ(misalignedGemmKind(n), PrecisionKind::kNone) << n;
}

}  // namespace
}  // namespace gpudoctor
