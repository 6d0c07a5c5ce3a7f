#include "diagnosis/fixes/fused_optimizer.h"

#include <string>
#include <utility>

#include "diagnosis/fixes/fix_test_util.h"

namespace gpudoctor {
namespace {

TEST(FusedOptimizerFix, OneKernelPassAndNoCapturableExtras) {
  ReplayEdits ed;
  ed.optimizer_kernel_add_ns = 2900;  // a cuda_graphs edit before it
  ASSERT_TRUE(testing::applyFix(fusedOptimizerFix(), nullptr, nullptr, ed));
  EXPECT_TRUE(ed.fused_optimizer);
  EXPECT_EQ(ed.optimizer_gpu_scale, kFusedAdamWGpuScale);
  EXPECT_EQ(ed.optimizer_kernel_add_ns, 0);
}

// The GPU work's scale follows the optimizer class the job runs: SGD's foreach path makes fewer passes
// than the Adam family's, so fusing it takes less.
TEST(FusedOptimizerFix, ScalesTheGpuWorkByTheJobsOptimizerClass) {
  RunAnalysis run;
  for (const auto& [name, scale] : {std::pair<std::string, double>{"SGD", kFusedSgdGpuScale},
                                    {"Adam", kFusedAdamGpuScale},
                                    {"AdamW", kFusedAdamWGpuScale},
                                    {"RMSprop", kFusedAdamWGpuScale},
                                    {"", kFusedAdamWGpuScale}}) {
    run.job.optimizer = name;
    ReplayEdits ed;
    std::string basis;
    ASSERT_TRUE(fusedOptimizerFix().edit({nullptr, &run}, ed, basis)) << name;
    EXPECT_EQ(ed.optimizer_gpu_scale, scale) << name;
    // The basis names the class that was measured, and an unmeasured one as assumed alike.
    const bool other = name == "RMSprop";
    EXPECT_EQ(basis.find("RMSprop assumed alike") != std::string::npos, other) << basis;
    EXPECT_NE(basis.find(other || name.empty() ? "AdamW's fused" : name + "'s fused"), std::string::npos) << basis;
  }
  EXPECT_LT(kFusedAdamWGpuScale, kFusedAdamGpuScale);
  EXPECT_LT(kFusedAdamGpuScale, kFusedSgdGpuScale);
}

}  // namespace
}  // namespace gpudoctor
