// Embedding tables with dense gradients (analysis/embedding_grads.h): every step zeroes a gradient
// the size of each table and the optimizer updates every row, looked up or not.
#include <fmt/format.h>

#include "analysis/embedding_grads.h"
#include "diagnosis/fixes/sparse_embedding_grads.h"
#include "diagnosis/rules/registry.h"

namespace gpudoctor {
namespace {

constexpr ThresholdDecl kTableShareMin{
    "embedding_table_share_min",
    0.10,
    0,
    1,
    "ratio",
    "share of the step the dense tables' gradient fills and estimated optimizer update take on the GPU"};

class DenseEmbeddingGrads : public Rule {
 public:
  std::string_view id() const override { return "embedding.dense_grads"; }
  std::vector<const ThresholdDecl*> thresholds() const override { return {&kTableShareMin}; }
  void evaluate(const Facts& f, const Thresholds& th, std::vector<Finding>& out) const override {
    const EmbeddingFacts& e = f.embedding;
    if (e.dense_tables <= 0 || e.fill_ns <= 0) return;
    const double optimizer = f.perStep(f.classNs(KernelClass::kOptimizer));
    const double update = tableUpdateNs(e.fill_ns, optimizer, f.fused_optimizer);
    if (f.share(e.fill_ns + update) < th.get(kTableShareMin)) return;
    Finding x = gainFinding(
        f, th, "embedding.dense_grads",
        fmt::format("Embedding tables get dense gradients: {:.0f} a step, each zeroed whole and every row updated",
                    e.dense_tables),
        e.fill_ns + optimizer,
        "the GPU time a sparse gradient removes: the tables' zero fills and, at most, all of the optimizer's GPU "
        "time (upper bound; the sparse path's own host work, sorting the looked-up ids and SparseAdam's operators "
        "per table, only adds to the step)");
    x.evidence = {{"dense embedding backward operators", e.dense_tables, "per step"},
                  {"zero fills of table-sized gradients (GPU)", ms(e.fill_ns), "ms/step"},
                  {"GPU work of the dense embedding backward", ms(e.backward_ns), "ms/step"},
                  {"optimizer GPU time", ms(optimizer), "ms/step"},
                  {"of it the tables' update (estimated: the fill's time per access)", ms(update), "ms/step"}};
    x.explanation =
        "With sparse=False the backward pass writes a gradient as large as the whole table and the optimizer "
        "reads and writes every row of it and of its state each step, though a batch looks up few rows. A "
        "sparse gradient touches only those rows, but coalesces the ids (a sort and a host sync per table) and "
        "SparseAdam runs about 24 operators per table: it pays where the GPU sets the step and the tables are "
        "large, and can cost more than it saves where the host does.";
    x.explanation += fmt::format(
        " Measured on an H100 host, the sparse path's own host work is about {:.2f} ms a step per table: {:.1f} ms "
        "here for {:.0f} tables; the what-if adds it where the tables' backward runs.",
        kSparseEmbeddingTableNs / 1e6, kSparseEmbeddingTableNs / 1e6 * e.dense_tables, e.dense_tables);
    x.fix = {"nn.EmbeddingBag(rows, dim, mode=\"sum\", sparse=True)   # gradients of the looked-up rows only",
             "opt_tables = torch.optim.SparseAdam(list(model.tables.parameters()), lr=lr)   # dense parameters keep "
             "AdamW",
             "# or table-batched embeddings with the optimizer fused into backward (torchrec / fbgemm_gpu)"};
    out.push_back(std::move(x));
  }
};

}  // namespace

const Rule& denseEmbeddingGradsRule() {
  static const DenseEmbeddingGrads r;
  return r;
}

}  // namespace gpudoctor
