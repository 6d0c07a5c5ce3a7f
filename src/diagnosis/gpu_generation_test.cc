// The GPU generation from kernel names where a trace has no deviceProperties, and the precision
// advice that follows from it: bf16 / TF32 from Ampere on, fp16 with a GradScaler before.
#include "analysis/gpu_generation.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "analysis/run_test_util.h"
#include "diagnosis/diagnosis.h"
#include "diagnosis/fixes/bf16.h"
#include "diagnosis/fixes/registry.h"
#include "model/ceilings.h"

namespace gpudoctor {
namespace gpu_generation_test {
TEST(GpuGeneration, KernelNamesProveTheirArchitecture) {
  // kineto_v100_resnet50 (no deviceProperties), hta_v100_resnet_ns.
  EXPECT_EQ(computeMajorFromKernelName("volta_sgemm_128x64_nn"), 7);
  EXPECT_EQ(computeMajorFromKernelName("volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1"), 7);
  // param_rtx2080ti_resnet: cuDNN's Turing and Volta kernels on a Turing GPU.
  EXPECT_EQ(computeMajorFromKernelName("cudnn_turing_scudnn_128x64_stridedB_splitK_xregs_large_nn_v1"), 7);
  EXPECT_EQ(computeMajorFromKernelName("cudnn_volta_scudnn_128x128_relu_small_nn_v1"), 7);
  // hta_sampled_rank0 (no deviceProperties), hta_a100_alexnet.
  EXPECT_EQ(computeMajorFromKernelName("ampere_sgemm_128x128_tn"), 8);
  EXPECT_EQ(
      computeMajorFromKernelName("sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_"
                                 "tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_alignc4_execute_kernel"),
      8);
  // tracelens_h100_falconsai, tracelens_b200_eager.
  EXPECT_EQ(computeMajorFromKernelName("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_"
                                       "execute_segment_k_off_kernel__5x_cublas"),
            9);
  EXPECT_EQ(computeMajorFromKernelName("fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128"
                                       "PersistentContext"),
            10);
  // Names that name no architecture, or only look alike inside a word.
  EXPECT_EQ(computeMajorFromKernelName("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<"
                                       "float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, "
                                       "at::detail::Array<char*, 1>)"),
            -1);
  EXPECT_EQ(computeMajorFromKernelName("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"), -1);
  EXPECT_EQ(computeMajorFromKernelName("my_prism80_kernel"), -1);
  EXPECT_EQ(computeMajorFromKernelName("smem_copy_kernel"), -1);
}

// One step of 40 FP32 GEMMs (aten::mm) of 500 us each with the given kernel names in turn, and
// deviceProperties only when `device` is given.
std::string gemmTrace(const std::vector<std::string>& kernels, const std::string& device = "") {
  std::string ev = R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0,
    "dur": 24000})";
  for (int k = 0; k < 40; ++k) {
    const int t = 10 + 600 * k, c = 100 + k;
    const std::string& kernel = kernels[static_cast<size_t>(k) % kernels.size()];
    ev += ",\n" + std::string(R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": )") +
          std::to_string(t) + R"(, "dur": 20, "args": {"External id": )" + std::to_string(c) + "}}";
    ev += ",\n" +
          std::string(R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": )") +
          std::to_string(t + 10) + R"(, "dur": 5, "args": {"correlation": )" + std::to_string(c) + "}}";
    ev += ",\n" + std::string(R"({"ph": "X", "cat": "kernel", "name": ")") + kernel +
          R"(", "pid": 0, "tid": 7, "ts": )" + std::to_string(t + 20) + R"(, "dur": 500, "args": {"correlation": )" +
          std::to_string(c) + R"(, "External id": )" + std::to_string(c) + R"(, "device": 0, "stream": 7}})";
  }
  return R"({"schemaVersion": 1, )" + device + R"("traceEvents": [)" + ev + "]}";
}

std::unique_ptr<testing::Loaded> load(const std::string& json, const char* name) {
  const std::filesystem::path p = std::filesystem::temp_directory_path() / name;
  std::ofstream(p) << json;
  auto l = testing::loadRun({p.string()});
  std::filesystem::remove(p);
  return l;
}

// The rules alone (the advice does not need the replay).
Diagnosis rulesOf(const RunAnalysis& run) {
  return diagnoseRun(run, Thresholds::defaults(), {}, nullptr, DiagnoseRunOptions{false, false});
}

const Finding* fp32GemmOf(const Diagnosis& d) {
  for (const Finding& f : d.findings)
    if (f.id == "precision.fp32_gemm") return &f;
  return nullptr;
}

bool fixMentions(const Finding& f, const std::string& word) {
  for (const std::string& line : f.fix)
    if (line.find(word) != std::string::npos) return true;
  return false;
}

// kineto_v100_resnet50 has no deviceProperties and only volta_* kernels: a pre-Ampere GPU, told fp16
// autocast with a GradScaler at the FP16 rate, not bf16 or TF32, with a note saying how it was told.
TEST(GpuGeneration, VoltaKernelsWithoutDevicePropertiesGetFp16Advice) {
  auto l = load(gemmTrace({"volta_sgemm_128x64_nn", "volta_sgemm_128x32_nt"}), "gpudoctor_gen_volta.json");
  ASSERT_EQ(l->run.ranks.size(), 1u);
  const GpuGeneration g = gpuGenerationOf(*l->run.ranks.front().trace);
  EXPECT_EQ(g.compute_major, 7);
  EXPECT_NE(g.note.find("volta_sgemm"), std::string::npos) << g.note;
  const Diagnosis d = rulesOf(l->run);
  const Finding* f = fp32GemmOf(d);
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(fixMentions(*f, "GradScaler"));
  EXPECT_FALSE(fixMentions(*f, "bfloat16"));
  EXPECT_FALSE(fixMentions(*f, "allow_tf32"));
  EXPECT_NE(f->gain_basis.find("fp16 autocast"), std::string::npos) << f->gain_basis;
  EXPECT_EQ(f->gain_basis.find("bf16 autocast"), std::string::npos) << f->gain_basis;
  EXPECT_EQ(f->gain_basis.find("TF32 alone"), std::string::npos) << f->gain_basis;
  EXPECT_NE(f->gain_basis.find("inferred from kernel names"), std::string::npos) << f->gain_basis;
}

// Names give a lower bound: volta_* kernels beside an sm80_* one run on Ampere or newer (cuDNN runs
// older kernels on newer GPUs), and the trace's deviceProperties win over names.
TEST(GpuGeneration, TheNewestNameAndThenDevicePropertiesWin) {
  auto mixed = load(gemmTrace({"volta_sgemm_128x64_nn", "ampere_sgemm_128x128_tn"}), "gpudoctor_gen_mixed.json");
  EXPECT_EQ(gpuGenerationOf(*mixed->run.ranks.front().trace).compute_major, 8);
  const Diagnosis d = rulesOf(mixed->run);
  const Finding* f = fp32GemmOf(d);
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(fixMentions(*f, "bfloat16"));
  auto h100 = load(gemmTrace({"volta_sgemm_128x64_nn"}, R"("deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB )"
                                                        R"(HBM3", "computeMajor": 9, "computeMinor": 0}], )"),
                   "gpudoctor_gen_h100.json");
  const GpuGeneration g = gpuGenerationOf(*h100->run.ranks.front().trace);
  EXPECT_EQ(g.compute_major, 9);
  EXPECT_TRUE(g.note.empty()) << g.note;
}

// bf16 autocast is not predicted on a GPU without BF16 tensor cores, whatever ceilings were given
// (the H200's here): no bf16 speedup is printed for a V100 trace; on Ampere names it is.
TEST(GpuGeneration, NoBf16PredictionBeforeAmpere) {
  const Ceilings c = *builtinCeilings("NVIDIA H200");
  auto volta = load(gemmTrace({"volta_sgemm_128x64_nn", "volta_sgemm_128x32_nt"}), "gpudoctor_gen_volta_bf16.json");
  ReplayEdits ed;
  std::string basis;
  EXPECT_FALSE(bf16Fix().edit({&c, &volta->run}, ed, basis));
  auto ampere = load(gemmTrace({"ampere_sgemm_128x128_tn"}), "gpudoctor_gen_ampere_bf16.json");
  EXPECT_TRUE(bf16Fix().edit({&c, &ampere->run}, ed, basis));
}

}  // namespace gpu_generation_test
}  // namespace gpudoctor
