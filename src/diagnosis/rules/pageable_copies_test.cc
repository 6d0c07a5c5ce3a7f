#include "diagnosis/rules/rule_test_util.h"

namespace gpudoctor {
namespace {
using namespace testing;

TEST(RulePageableCopies, PageableCopiesAreNamedWithTheirTime) {
  Facts f = healthyFacts();
  f.mean.pageable_htod_count = 4;
  f.mean.pageable_htod_ns = 1.2e6;
  f.mean.pinned_htod_count = 1;
  auto r = run(pageableCopiesRule(), f);
  const Finding* x = r.find("input.pageable_copies");
  ASSERT_NE(x, nullptr);
  EXPECT_DOUBLE_EQ(x->gain_ms_per_step, 1.2 + ms(f.mean.wall - f.mean.busy));  // and the GPU's idle
  EXPECT_DOUBLE_EQ(evidenceOf(*x, "pinned HtoD copies"), 1);
  EXPECT_EQ(r.checklist[0].status, CheckStatus::kFail);
}

TEST(RulePageableCopies, SmallCopiesOfPythonDataAreToldToBeMadeOnce) {
  Facts f = healthyFacts();
  f.mean.pageable_htod_count = 2;
  f.mean.pageable_htod_bytes = 24;  // two 12-byte constants a step
  f.mean.pageable_htod_ns = 1600;
  auto small = run(pageableCopiesRule(), f);
  const Finding* x = small.find("input.pageable_copies");
  ASSERT_NE(x, nullptr);
  EXPECT_DOUBLE_EQ(evidenceOf(*x, "pageable bytes per copy"), 12);
  f.job.host_syncs.push_back({"aten::to", "cudaStreamSynchronize", "", "HtoD pageable", 2.0, 1e5, 9e4});
  f.job.host_syncs.push_back({"aten::item", "cudaStreamSynchronize", "", "DtoH", 1.0, 1e5, 9e4});  // not a copy in
  auto named = run(pageableCopiesRule(), f);
  ASSERT_NE(named.find("input.pageable_copies"), nullptr);
  // where the copies come from, as the job profile saw the host block in them (the lab's OPT trace: a
  // 4-byte aten::to at the step's top level)
  EXPECT_DOUBLE_EQ(evidenceOf(*named.find("input.pageable_copies"), "issued by aten::to in the step itself"), 2);
  ASSERT_FALSE(x->fix.empty());
  EXPECT_NE(x->fix[0].find("once"), std::string::npos);
  f.mean.pageable_htod_bytes = 2 * 8e6;  // batches: pinned memory is the fix
  auto big = run(pageableCopiesRule(), f);
  ASSERT_NE(big.find("input.pageable_copies"), nullptr);
  EXPECT_EQ(big.find("input.pageable_copies")->fix[0], "DataLoader(..., pin_memory=True)");
}

TEST(RulePageableCopies, PinnedOnlyPassesAndNoCopiesIsUnknown) {
  Facts f = healthyFacts();
  f.mean.pinned_htod_count = 3;
  auto r = run(pageableCopiesRule(), f);
  EXPECT_TRUE(r.findings.empty());
  EXPECT_EQ(r.checklist[0].status, CheckStatus::kPass);
  EXPECT_EQ(run(pageableCopiesRule(), healthyFacts()).checklist[0].status, CheckStatus::kUnknown);
}

}  // namespace
}  // namespace gpudoctor
