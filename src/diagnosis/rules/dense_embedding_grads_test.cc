#include "diagnosis/rules/rule_test_util.h"

namespace gpudoctor {
namespace {
using namespace testing;

// 10 ms steps; 8 tables whose zero fills take 0.25 ms and an unfused optimizer 6 ms of GPU time.
Facts tables(double fill_ns, double optimizer_ns) {
  Facts f = healthyFacts();
  f.embedding.dense_tables = 8;
  f.embedding.fill_ns = fill_ns;
  f.embedding.backward_ns = 4 * fill_ns;
  f.class_ns[static_cast<size_t>(KernelClass::kOptimizer)] = optimizer_ns * f.steps;
  return f;
}

TEST(RuleDenseEmbeddingGrads, LargeTablesAreNamedWithTheirBound) {
  auto r = run(denseEmbeddingGradsRule(), tables(0.25e6, 6e6));
  const Finding* x = r.find("embedding.dense_grads");
  ASSERT_NE(x, nullptr);
  EXPECT_DOUBLE_EQ(x->gain_ms_per_step, 0.25 + 6);  // the fills and at most all of the optimizer
  // Graded here by the bound; the what-if grades it again by its prediction (what_if_test.cc).
  // 25 accesses per parameter for an unfused AdamW, each as long as the fill: 6.25 ms, capped at 6.
  EXPECT_DOUBLE_EQ(evidenceOf(*x, "of it the tables' update (estimated: the fill's time per access)"), 6);
  EXPECT_FALSE(x->fix.empty());
}

TEST(RuleDenseEmbeddingGrads, SmallTablesSuchAsALanguageModelsVocabularyAreLeftAlone) {
  // A token embedding's fill: 20 us, its share of a 6 ms optimizer update 0.5 ms: 5 % of the step.
  EXPECT_EQ(run(denseEmbeddingGradsRule(), tables(0.02e6, 6e6)).find("embedding.dense_grads"), nullptr);
  EXPECT_EQ(run(denseEmbeddingGradsRule(), tables(0, 6e6)).find("embedding.dense_grads"), nullptr);
  EXPECT_EQ(run(denseEmbeddingGradsRule(), healthyFacts()).find("embedding.dense_grads"), nullptr);
}

}  // namespace
}  // namespace gpudoctor
