// Attention written by hand (batched GEMM + softmax + batched GEMM) instead of a fused kernel, or
// scaled_dot_product_attention falling back to its math backend, which runs the same kernels.
#include <algorithm>
#include <string>
#include <string_view>

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

// SDPA restricted to its fused backends: where none takes a call, PyTorch fails and says why.
constexpr std::string_view kFusedBackendsOnly =
    "with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION]):";

class MaterializedAttention : public Rule {
 public:
  std::string_view id() const override { return "attention.materialized"; }
  std::vector<const ThresholdDecl*> thresholds() const override { return {&kFusedSaving}; }
  void evaluate(const Facts& f, const Thresholds& th, std::vector<Finding>& out) const override {
    double unfused = f.classNs(KernelClass::kAttentionUnfused), fused = f.classNs(KernelClass::kAttentionFused);
    if (unfused <= 0) return;
    double saving = th.get(kFusedSaving);
    // The job may call scaled_dot_product_attention already, and get its math backend: the same
    // kernels as attention written by hand, and another fix.
    const double sdpa = f.job.sdpa_calls_per_step, math = f.job.sdpa_math_calls_per_step;
    Finding x = gainFinding(
        f, th, "attention.materialized",
        math > 0 ? fmt::format("scaled_dot_product_attention runs its math backend in {:.3g} of {:.3g} calls a step: "
                               "the score matrix is materialized (batched GEMM + softmax + batched GEMM)",
                               math, sdpa)
                 : "Attention is materialized (batched GEMM + softmax + batched GEMM) instead of a fused kernel",
        f.perStep(unfused) * saving,
        fmt::format(
            "{:.0f}% of the materialized-attention kernel time: fused (flash) attention is 2-4x faster (guide), "
            "and it never writes the score matrix",
            pct(saving)));
    x.evidence = {{"materialized attention", ms(f.perStep(unfused)), "ms/step"},
                  {"fused attention", ms(f.perStep(fused)), "ms/step"},
                  {"share of kernel time", pct(unfused / std::max(1.0, f.kernel_ns)), "%"}};
    if (math > 0) {
      x.evidence.push_back({"scaled_dot_product_attention calls", sdpa, "per step"});
      x.evidence.push_back({"... on its math backend", math, "per step"});
      x.explanation =
          "The job calls scaled_dot_product_attention, but these calls ran its math backend: the same batched "
          "GEMMs and softmax as attention written by hand, with the full score matrix in memory. Either no fused "
          "backend (flash, memory-efficient, cuDNN) takes the calls' inputs (each has its limits: flash takes "
          "fp16/bf16 and no arbitrary mask; all of them, certain head sizes and mask layouts), or the fused "
          "backends are turned off (torch.backends.cuda.enable_*_sdp(False), a library's own sdpa_kernel). "
          "Restricting the backends makes PyTorch say which one failed and why.";
      x.fix = {"from torch.nn.attention import SDPBackend, sdpa_kernel",
               std::string(kFusedBackendsOnly),
               "    loss = model(x)  # fails with 'No available kernel'; the warnings give each backend's reason",
               "# then change what they name (dtype, mask layout, head size); where it runs without failing,",
               "# the code turns the fused backends off: enable_flash_sdp(False), enable_mem_efficient_sdp(False),",
               "# sdpa_kernel(SDPBackend.MATH)",
               "# (PyTorch before 2.3: torch.backends.cuda.sdp_kernel(enable_math=False) instead of sdpa_kernel)"};
    } else {
      x.explanation = "bmm/softmax kernels launched by hand-written attention hold the full score matrix in memory.";
      x.fix = {"out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)",
               "# decoder (causal) attention: is_causal=True instead of a mask"};
    }
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
