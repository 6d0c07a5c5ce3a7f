#include "diagnosis/fixes/channels_last.h"

#include "analysis/replay/replay.h"
#include "diagnosis/fixes/fix_test_util.h"

namespace gpudoctor {
namespace {

constexpr const char* kNchwToNhwc =
    "void cudnn::engines_precompiled::nchwToNhwcKernel<float, float, float, false, true, "
    "(cudnnKernelDataType_t)2>(cudnn::engines_precompiled::nchw2nhwc_params_t<float>, float const*, float*)";

// The GPU's busy time a step before and after channels_last, on GPU-bound steps of these kernels, 1 ms
// each, launched ahead of the GPU and waited for.
std::pair<double, double> busyBeforeAfter(const std::vector<const char*>& names) {
  std::vector<RankTrace> v = testing::gpuBoundSteps(names);
  auto run = analyzeRun(v, {});
  EXPECT_TRUE(run.ok());
  if (!run.ok()) return {0, 0};
  ReplayEdits ed;
  EXPECT_TRUE(testing::applyFix(channelsLastFix(), nullptr, &run.value(), ed));
  ReplayModel m(run.value());
  const Replay before = m.replay(), after = m.replay(ed);
  EXPECT_TRUE(after.available) << after.reason;
  return {static_cast<double>(before.replayed.busy_ns), static_cast<double>(after.replayed.busy_ns)};
}

// One convolution between cuDNN's two layout transposes (real names, lab trace unet_diffusion_fp32,
// H200): channels_last takes the two transposes and leaves the convolution.
TEST(ChannelsLastFix, OnlyTheLayoutTransposesGo) {
  const auto [before, after] = busyBeforeAfter(
      {kNchwToNhwc,
       "sm90_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x32_warpgroupsize1x1x1_"
       "g1_execute_segment_k_off_kernel__5x_cudnn",
       "void cudnn::engines_precompiled::nhwcToNchwKernel<float, float, float, true, false, "
       "(cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nhwc2nchw_params_t<float>, float const*, float*)"});
  EXPECT_NEAR(before, 3e6, 1e3);
  EXPECT_NEAR(after, 1e6, 1e3);
}

// Batch norm in NCHW runs cuDNN's bn_*_1C11 kernels; channels_last moves it to the NHWC ones, which take
// kNhwcBatchNormScale of the time. A batch norm already in an NHWC kernel stays. Names verbatim from the
// lab's resnext50_fp32 traces (H200), NCHW and channels_last.
TEST(ChannelsLastFix, NchwBatchNormsRunAtTheNhwcKernelsRate) {
  const auto [before, after] = busyBeforeAfter(
      {kNchwToNhwc,
       "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 128, true, 1, true>(cudnnTensorStruct, float "
       "const*, cudnnTensorStruct, float*, float const*, float const*, float, float, float*, float*, float*, float*, "
       "float, float)",
       "void cudnn::batchnorm_fwtr_nhwc_semiPersist<float, float, float, 512, 16, 2, 4, 1, 1, false, false, true, "
       "2>(cudnn::NhwcBatchNormFwdParams)"});
  EXPECT_NEAR(before, 3e6, 1e3);
  EXPECT_NEAR(after, (kNhwcBatchNormScale + 1) * 1e6, 1e3);
}

// GroupNorm has no NHWC kernels: channels_last tensors are copied back to NCHW around it, so the
// transposes' time stays (the held-out unet_diffusion_fp32 on an H100: predicted 1.10x with them gone,
// measured 0.85x). Read from the job: a step that runs aten::group_norm.
TEST(ChannelsLastFix, AGroupNormJobKeepsTheTransposes) {
  TraceBuilder b;
  int64_t corr = 1, t = 1000;
  for (int s = 0; s < 4; ++s) {
    const int64_t begin = t;
    b.add(EventKind::kHostOp, TraceBuilder::kHost, "aten::group_norm", t, t + 3000);
    b.launch(corr++, t + 500, t + 2500, EventKind::kKernel, TraceBuilder::kStream7, kNchwToNhwc, t + 10'000,
             t + 1'010'000);
    b.add(EventKind::kRuntimeCall, TraceBuilder::kHost, "cudaDeviceSynchronize", t + 4000, t + 1'011'000, corr++);
    t += 1'012'000;
    b.step(s + 1, begin, t);
  }
  std::vector<RankTrace> v;
  v.push_back(b.done());
  auto run = analyzeRun(v, {});
  ASSERT_TRUE(run.ok());
  EXPECT_TRUE(run.value().job.group_norm);
  ReplayEdits ed;
  ASSERT_TRUE(testing::applyFix(channelsLastFix(), nullptr, &run.value(), ed));
  EXPECT_FALSE(ed.drop_layout_transposes);
  ReplayModel m(run.value());
  EXPECT_NEAR(m.replay(ed).replayed.busy_ns, m.replay().replayed.busy_ns, 1);
  run.value().job.group_norm = false;  // the same steps without GroupNorm: the transpose goes
  ReplayEdits plain;
  ASSERT_TRUE(testing::applyFix(channelsLastFix(), nullptr, &run.value(), plain));
  EXPECT_LT(m.replay(plain).replayed.busy_ns, 0.1 * m.replay().replayed.busy_ns);
}

}  // namespace
}  // namespace gpudoctor
