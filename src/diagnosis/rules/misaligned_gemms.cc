// Tensor-core GEMMs on misaligned operands: a 16-bit GEMM whose dimension is not a multiple of 8 (an LM
// head over GPT-2's 50257 tokens, RoBERTa's 50265, BERT's 30522) runs on cuBLAS's fallback kernels,
// aligned to 2 or 4 bytes (kernel_class.h), at a fraction of the aligned kernels' rate. Padding the
// dimension to a multiple of 64 moves it back.
#include <fmt/format.h>

#include "diagnosis/fixes/pad_gemm_dims.h"
#include "diagnosis/rules/registry.h"

namespace gpudoctor {
namespace {

class MisalignedGemms : public Rule {
 public:
  std::string_view id() const override { return "gemm.misaligned"; }
  void evaluate(const Facts& f, const Thresholds& th, std::vector<Finding>& out) const override {
    double ns = 0, saved = 0;
    for (size_t i = 0; i < f.misaligned_gemm_ns.size(); ++i) {
      const double per_step = f.perStep(f.misaligned_gemm_ns[i]);
      ns += per_step;
      saved += per_step * (1 - kPaddedGemmShare[i]);
    }
    if (ns <= 0 || f.share(saved) < th.get(kMinGainShare)) return;
    Finding x = gainFinding(
        f, th, "gemm.misaligned",
        fmt::format("{:.1f}% of the step runs GEMMs on misaligned operands: a dimension not a multiple of 8",
                    pct(f.share(ns))),
        saved,
        fmt::format("those kernels' GPU time less the aligned kernels' time for the same work (x {:.2f} at 2-byte, "
                    "{:.2f} at 4-byte alignment, measured on LM heads of odd vocabularies)",
                    kPaddedGemmShare[0], kPaddedGemmShare[1]));
    x.evidence = {{"misaligned GEMM kernels", ms(ns), "ms/step"},
                  {"share of step", pct(f.share(ns)), "%"},
                  {"kernels", f.perStep(static_cast<double>(f.misaligned_gemms)), "per step"}};
    x.explanation =
        "Tensor cores read 16-byte-aligned operands: a bf16/fp16 GEMM needs every dimension a multiple of 8 "
        "(TF32: 4). Otherwise cuBLAS falls back to kernels with 2- or 4-byte loads (names ending _align1, "
        "_align2), several times slower. The usual culprit is a vocabulary size (50257, 50265, 30522) in the "
        "embedding and LM head; padding it costs a few unused rows.";
    x.fix = {"model.resize_token_embeddings(len(tokenizer), pad_to_multiple_of=64)   # transformers",
             "# or, building the model: vocab_size = (vocab_size + 63) // 64 * 64   (e.g. 50257 -> 50304)",
             "# other dimensions (hidden, MLP, heads x head_dim, batch x sequence) as multiples of 8"};
    out.push_back(std::move(x));
  }
};

}  // namespace

const Rule& misalignedGemmsRule() {
  static const MisalignedGemms r;
  return r;
}

}  // namespace gpudoctor
