// Attention written by hand (batched GEMM + softmax + batched GEMM) instead of a fused kernel.
#include <algorithm>

#include <fmt/format.h>

#include "diagnosis/rules/registry.h"

namespace gpudoctor {
namespace {

constexpr ThresholdDecl kFusedSaving{"fused_attention_saving",
                                     0.75,
                                     0,
                                     1,
                                     "ratio",
                                     "share of materialized-attention kernel time a fused kernel saves (guide: 2-4x)"};

class MaterializedAttention : public Rule {
 public:
  std::string_view id() const override { return "attention.materialized"; }
  std::vector<const ThresholdDecl*> thresholds() const override { return {&kFusedSaving}; }
  void evaluate(const Facts& f, const Thresholds& th, std::vector<Finding>& out) const override {
    double unfused = f.classNs(KernelClass::kAttentionUnfused), fused = f.classNs(KernelClass::kAttentionFused);
    if (unfused <= 0) return;
    double saving = th.get(kFusedSaving);
    Finding x = gainFinding(
        f, th, "attention.materialized",
        "Attention is materialized (batched GEMM + softmax + batched GEMM) instead of a fused kernel",
        f.perStep(unfused) * saving,
        fmt::format(
            "{:.0f}% of the materialized-attention kernel time: fused (flash) attention is 2-4x faster (guide), "
            "and it never writes the score matrix",
            pct(saving)));
    x.evidence = {{"materialized attention", ms(f.perStep(unfused)), "ms/step"},
                  {"fused attention", ms(f.perStep(fused)), "ms/step"},
                  {"share of kernel time", pct(unfused / std::max(1.0, f.kernel_ns)), "%"}};
    x.explanation = "bmm/softmax kernels launched by hand-written attention hold the full score matrix in memory.";
    x.fix = {"out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)",
             "# decoder (causal) attention: is_causal=True instead of a mask"};
    out.push_back(std::move(x));
  }
  void checklist(const Facts& f, const Thresholds&, const std::vector<Finding>& mine,
                 std::vector<ChecklistItem>& out) const override {
    double unfused = f.classNs(KernelClass::kAttentionUnfused), fused = f.classNs(KernelClass::kAttentionFused);
    bool any = unfused + fused > 0;
    out.push_back({"compute", "Fused (flash) attention", statusFrom(mine, any),
                   any ? fmt::format("materialized {:.2f} ms/step, fused {:.2f} ms/step", ms(f.perStep(unfused)),
                                     ms(f.perStep(fused)))
                       : "no attention kernels recognized"});
  }
};

}  // namespace

const Rule& materializedAttentionRule() {
  static const MaterializedAttention r;
  return r;
}

}  // namespace gpudoctor
