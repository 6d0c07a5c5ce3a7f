// Fix `sparse_embedding_grads`: the embedding tables' gradients sparse (sparse=True) with SparseAdam for
// the tables, in place of dense gradients and the dense optimizer (analysis/embedding_grads.h).
#include "diagnosis/fixes/sparse_embedding_grads.h"

#include <string>

#include <fmt/format.h>

#include "diagnosis/fixes/registry.h"

namespace gpudoctor {

bool sparseEmbeddingEdit(const RunAnalysis& run, int64_t table_ns, ReplayEdits& ed) {
  double fill = 0, optimizer = 0;
  for (const RankAnalysis& r : run.ranks) fill += static_cast<double>(r.embedding.fill_ns);
  for (const auto& c : run.kernels.classes)
    if (c.cls == KernelClass::kOptimizer) optimizer = static_cast<double>(c.dur.total_ns);
  if (fill <= 0) return false;
  ed.drop_embedding_fills = true;
  if (optimizer > 0)
    ed.optimizer_gpu_scale = 1 - tableUpdateNs(fill, optimizer, run.kernels.fused_optimizer) / optimizer;
  ed.sparse_embedding_table_ns = table_ns;
  return true;
}

namespace {

class SparseEmbeddingGradsFix : public Fix {
 public:
  std::string_view id() const override { return "sparse_embedding_grads"; }
  std::vector<std::string_view> answers() const override { return {"embedding.dense_grads"}; }
  std::string_view category() const override { return "compute"; }
  bool edit(const FixInputs& in, ReplayEdits& ed, std::string& basis) const override {
    // The coalescing syncs once a table cannot be captured in a CUDA graph: not with a graphed step.
    if (!in.run || ed.free_launches || !sparseEmbeddingEdit(*in.run, kSparseEmbeddingTableNs, ed)) return false;
    basis = fmt::format(
        "the tables' zero fills and the optimizer's estimated update of them gone from the GPU; the sparse path's "
        "own host work, {:.2f} ms per table and step (the ids' coalescing with its host sync, SparseAdam's "
        "operators; measured on an H100 host), added at each dense embedding backward operator",
        kSparseEmbeddingTableNs / 1e6);
    return true;
  }
};

}  // namespace

const Fix& sparseEmbeddingGradsFix() {
  static const SparseEmbeddingGradsFix fix;
  return fix;
}

}  // namespace gpudoctor
