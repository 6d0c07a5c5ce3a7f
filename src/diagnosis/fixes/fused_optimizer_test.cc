#include "diagnosis/fixes/fused_optimizer.h"

#include "diagnosis/fixes/fix_test_util.h"

namespace gpudoctor {
namespace {

TEST(FusedOptimizerFix, OneKernelPassAndNoCapturableExtras) {
  ReplayEdits ed;
  ed.optimizer_kernel_add_ns = 2900;  // a cuda_graphs edit before it
  ASSERT_TRUE(testing::applyFix(fusedOptimizerFix(), nullptr, nullptr, ed));
  EXPECT_TRUE(ed.fused_optimizer);
  EXPECT_EQ(ed.optimizer_gpu_scale, kFusedOptimizerGpuScale);
  EXPECT_EQ(ed.optimizer_kernel_add_ns, 0);
}

}  // namespace
}  // namespace gpudoctor
