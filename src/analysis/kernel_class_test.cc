#include "analysis/kernel_class.h"

#include <gtest/gtest.h>

#include <cmath>

#include "analysis/collectives.h"
#include "model/comm_kernels.h"

namespace gpudoctor {
namespace {

// Prints the class name on failure instead of a number.
#define EXPECT_CLASS(expected, ...) \
  EXPECT_EQ(kernelClassName(classifyKernel(__VA_ARGS__)), kernelClassName(expected))

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
               "void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*, long*, float*, int*, int*)", "", "");
  EXPECT_CLASS(KernelClass::kCommOther, "void deep_ep::internode_ll::combine<false, 7168>(void*, void*)", "", "");
  EXPECT_CLASS(KernelClass::kCommOther, "deep_ep::intranode::notify_dispatch(int const*, int*, int)", "aten::empty", "");
  EXPECT_CLASS(KernelClass::kCommOther, "void nvshmemi_barrier_all_on_stream_kernel()", "", "");
  // As PyTorch 2.11 names it (testdata/cases/symm_mem).
  EXPECT_CLASS(KernelClass::kCommOther,
               "void (anonymous namespace)::one_shot_all_reduce_kernel<float, 16, -1>(float**, float*, float*, "
               "unsigned long, unsigned long, unsigned int**, unsigned long)",
               "symm_mem::one_shot_all_reduce", "");
  EXPECT_EQ(commKernelLibrary("void (anonymous namespace)::elementwise_kernel<float>(int)"), "");
  EXPECT_CLASS(KernelClass::kCommOther, "void vllm::cross_device_reduce_1stage<c10::BFloat16, 8>(vllm::RankData*)", "", "");
  EXPECT_TRUE(isCommunication(KernelClass::kCommOther));
  EXPECT_TRUE(isCommunication(KernelClass::kNccl));
  EXPECT_FALSE(isCommunication(KernelClass::kElementwise));
  EXPECT_EQ(commKernelLibrary("void deep_ep::intranode::combine<bf16>(x)"), "deepep");
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

TEST(ClassifyKernel, HopperGemmTakesPrecisionFromTheOperator) {
  // nvjet names do not spell the precision: the op's input dtype decides.
  const char* nvjet = "nvjet_sm90_tst_128x128_64x6_2x1_v_bz_NNT";
  EXPECT_CLASS(KernelClass::kGemmBf16, nvjet, "aten::mm", "c10::BFloat16");
  EXPECT_CLASS(KernelClass::kGemmFp16, nvjet, "aten::mm", "c10::Half");
  // FP32 inputs and no "tf32" in the name: the plain FP32 path ("tst" in nvjet names is not TF32).
  EXPECT_CLASS(KernelClass::kGemmFp32Simt, nvjet, "aten::mm", "float");
  EXPECT_CLASS(KernelClass::kGemmOther, nvjet, "", "");
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
  EXPECT_TRUE(isFp32FusedAttentionKernel("fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<float, "
                                         "cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)"));
  EXPECT_TRUE(isFp32FusedAttentionKernel("fmha_cutlassB_f32_aligned_64x64_k64_sm80(PyTorchMemEffAttention::AttentionBackwardKernel)"));
  EXPECT_FALSE(isFp32FusedAttentionKernel("fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel)"));
  // cuDNN's fused attention has no FP32 kernel (its names say f16 for bf16 too).
  EXPECT_FALSE(isFp32FusedAttentionKernel("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64"));
  EXPECT_FALSE(isFp32FusedAttentionKernel("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, "
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
  EXPECT_EQ(dtypeBytes(""), 0);
}

TEST(Collectives, NcclKernelCollectiveWithoutArgs) {
  // A kernel without PyTorch's arguments is named by its kind (was "(no args)"), its size unknown.
  EXPECT_EQ(ncclKernelCollective("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"), "allreduce");
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

}  // namespace
}  // namespace gpudoctor
