#include "diagnosis/rules/rule_test_util.h"

namespace gpudoctor {
namespace {
using namespace testing;

Facts launchBound() {
  Facts f = healthyFacts();
  f.compute_kernels = 5000;  // 500 per step
  f.compute_kernel_p50_ns = 4000;
  f.mean.busy = f.mean.compute = 4e6;
  f.mean.idle_host = 6e6;
  f.mean.idle_other = 0;
  return f;
}

TEST(RuleLaunchOverhead, ShortKernelsAndHostIdleAreLaunchBound) {
  auto r = run(launchOverheadRule(), launchBound());
  const Finding* x = r.find("launch.overhead");
  ASSERT_NE(x, nullptr);
  EXPECT_DOUBLE_EQ(x->gain_ms_per_step, 6);
  EXPECT_DOUBLE_EQ(evidenceOf(*x, "kernels"), 500);
  EXPECT_DOUBLE_EQ(evidenceOf(*x, "median kernel"), 4);
  EXPECT_EQ(r.checklist[0].status, CheckStatus::kFail);
}

TEST(RuleLaunchOverhead, LongKernelsOrLoaderWaitsAreNot) {
  Facts f = launchBound();
  f.compute_kernel_p50_ns = 50000;
  EXPECT_TRUE(run(launchOverheadRule(), f).findings.empty());
  f = launchBound();
  f.mean.idle_host_loader = 5.5e6;  // the host was fetching data, not launching
  EXPECT_TRUE(run(launchOverheadRule(), f).findings.empty());
}

}  // namespace
}  // namespace gpudoctor
