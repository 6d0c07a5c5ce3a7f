// Dense embedding gradients found by ATen's backward operators, with the GPU work launched under them
// and the table-sized zero fill, on real traces: the lab's DLRM (EmbeddingBag) and a GPT's token
// embedding (nn.Embedding).
#include "analysis/embedding_grads.h"

#include <gtest/gtest.h>

#include "analysis/run_test_util.h"

namespace gpudoctor {
namespace {

const EmbeddingGrads& of(std::unique_ptr<testing::Loaded>& keep, const std::string& rel) {
  keep = testing::loadRun({testing::srcPath(rel)});
  return keep->run.ranks.at(0).embedding;
}

TEST(EmbeddingGrads, EmbeddingBagTablesAndATokenEmbedding) {
  std::unique_ptr<testing::Loaded> keep;
  const EmbeddingGrads& dlrm = of(keep, "testdata/lab/dlrm_embeddingbag__base.pt.trace.json.gz");
  const double steps = static_cast<double>(keep->run.ranks[0].windows.size());
  EXPECT_EQ(dlrm.dense_backward, static_cast<int64_t>(8 * steps));  // 8 tables a step
  EXPECT_EQ(dlrm.sparse_backward, 0);
  // 8 x 500k x 64 fp32 = 1 GB zeroed a step: about 0.2 ms at the H200's bandwidth.
  EXPECT_GT(dlrm.fill_ns / steps, 0.15e6);
  EXPECT_LT(dlrm.fill_ns / steps, 0.35e6);
  EXPECT_GT(dlrm.backward_gpu_ns, dlrm.fill_ns);
  std::unique_ptr<testing::Loaded> keep2;
  const EmbeddingGrads& gpt = of(keep2, "testdata/whatif/gpt_fp32_naive__base.pt.trace.json.gz");
  EXPECT_GT(gpt.dense_backward, 0);
  EXPECT_GT(gpt.fill_ns, 0);
  EXPECT_LT(gpt.fill_ns, dlrm.fill_ns);
}

}  // namespace
}  // namespace gpudoctor
