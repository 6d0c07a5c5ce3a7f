#include "diagnosis/fixes/cuda_graphs.h"

#include "diagnosis/fixes/fix_test_util.h"

namespace gpudoctor {
namespace {

TEST(CudaGraphsFix, FreeLaunchesAndUnderGradScalerAnEagerOptimizer) {
  ReplayEdits ed;
  ASSERT_TRUE(testing::applyFix(cudaGraphsFix(), nullptr, nullptr, ed));
  EXPECT_TRUE(ed.free_launches);
  EXPECT_FALSE(ed.graph_keeps_optimizer);
  RunAnalysis run;
  run.job.grad_scaler = true;
  run.job.param_tensors = 10;
  ReplayEdits scaled;
  ASSERT_TRUE(testing::applyFix(cudaGraphsFix(), nullptr, &run, scaled));
  EXPECT_TRUE(scaled.graph_keeps_optimizer);
  EXPECT_TRUE(scaled.graph_keeps_loss);
  EXPECT_DOUBLE_EQ(scaled.graphed_param_ops, kGraphedParamOps + kGraphedPassOps / 10);
}

TEST(CudaGraphsFix, ACapturedLoopAdamPaysForItsBiasCorrections) {
  RunAnalysis run;
  run.job.optimizer = "AdamW";
  run.job.optimizer_impl = "loop";
  ReplayEdits ed;
  ASSERT_TRUE(testing::applyFix(cudaGraphsFix(), nullptr, &run, ed));
  EXPECT_EQ(ed.optimizer_kernel_add_ns, kCapturableLoopKernelAddNs);
}

TEST(CudaGraphsModelFix, GraphsTheModelAloneAndNeedsItsParameters) {
  ReplayEdits ed;
  EXPECT_FALSE(testing::applyFix(cudaGraphsModelFix(), nullptr, nullptr, ed));
  RunAnalysis run;
  run.job.param_tensors = 4;
  ASSERT_TRUE(testing::applyFix(cudaGraphsModelFix(), nullptr, &run, ed));
  EXPECT_TRUE(ed.free_launches);
  EXPECT_TRUE(ed.graph_keeps_optimizer);
  EXPECT_TRUE(ed.graph_keeps_loss);
  EXPECT_DOUBLE_EQ(ed.graphed_param_ops, kGraphedParamOps + kGraphedPassOps / 4);
}

}  // namespace
}  // namespace gpudoctor
