// Convolutions in NCHW tensors: cuDNN and MIOpen run them NHWC and transpose every activation in and
// out (nchwToNhwc / nhwcToNchw, batched_transpose_* kernels), and the batch norms and pools around them
// run their NCHW kernels; channels_last keeps the tensors NHWC throughout.
#include <fmt/format.h>

#include "diagnosis/rules/registry.h"

namespace gpudoctor {
namespace {

constexpr ThresholdDecl kTransposeShareMax{
    "layout_transpose_share_max",
    0.03,
    0,
    1,
    "ratio",
    "share of the step the convolution library's NCHW<->NHWC layout transposes may take"};

class ChannelsLast : public Rule {
 public:
  std::string_view id() const override { return "layout.channels_last"; }
  std::vector<const ThresholdDecl*> thresholds() const override { return {&kTransposeShareMax}; }
  void evaluate(const Facts& f, const Thresholds& th, std::vector<Finding>& out) const override {
    const double ns = f.perStep(f.layout_transpose_ns);
    if (f.share(ns) <= th.get(kTransposeShareMax)) return;
    const double bn = f.perStep(f.nchw_batch_norm_ns), conv = f.perStep(f.convolution_ns);
    Finding x = gainFinding(
        f, th, "layout.channels_last",
        fmt::format("Convolutions transpose NCHW tensors to NHWC and back: {:.1f}% of the step", pct(f.share(ns))),
        ns + bn + conv,
        "the layout transposes' GPU time, the NCHW batch-norm kernels' and the convolutions' (channels_last "
        "replaces all three: cuDNN's NHWC batch norms and convolution kernels, faster but not free; pooling is "
        "not counted)");
    x.evidence = {{"layout transposes", ms(ns), "ms/step"},
                  {"share of step", pct(f.share(ns)), "%"},
                  {"NCHW batch norms", ms(bn), "ms/step"},
                  {"convolutions", ms(conv), "ms/step"}};
    x.explanation =
        "The convolution libraries' fast kernels run NHWC (cuDNN's, MIOpen's implicit-GEMM ones); on NCHW "
        "(contiguous) tensors every convolution transposes its input and output, and batch norm and pooling "
        "run their slower NCHW kernels.";
    x.fix = {"model = model.to(memory_format=torch.channels_last)",
             "x = x.to(memory_format=torch.channels_last)   # each input batch"};
    out.push_back(std::move(x));
  }
};

}  // namespace

const Rule& channelsLastRule() {
  static const ChannelsLast r;
  return r;
}

}  // namespace gpudoctor
