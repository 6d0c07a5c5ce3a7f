// Fix `channels_last`: the model and its input batches in torch.channels_last: cuDNN's convolutions read
// and write NHWC tensors as they are, without the NCHW<->NHWC transposes it (or MIOpen) runs around each of them,
// and batch norm runs cuDNN's NHWC kernels.
#include "diagnosis/fixes/channels_last.h"

#include <fmt/format.h>

#include "analysis/run_analysis.h"
#include "diagnosis/fixes/registry.h"

namespace gpudoctor {
namespace {

class ChannelsLastFix : public Fix {
 public:
  std::string_view id() const override { return "channels_last"; }
  std::vector<std::string_view> answers() const override { return {"layout.channels_last"}; }
  std::string_view category() const override { return "compute"; }
  bool edit(const FixInputs& in, ReplayEdits& ed, std::string& basis) const override {
    // GroupNorm has no NHWC kernels: it copies a channels_last input back to NCHW, and the elementwise
    // work between it and the NHWC convolutions runs on strided tensors, so the transposes' time stays
    // (a diffusion UNet: its strided elementwise kernels 3.2 -> 11.9 ms a step, measured 0.85x).
    const bool group_norm = in.run && in.run->job.group_norm;
    ed.drop_layout_transposes = !group_norm;
    ed.nchw_batch_norm_scale *= kNhwcBatchNormScale;
    // Pooling and the convolutions stay as traced: their NHWC kernels measured both faster and slower
    // (a squeeze-excitation's pooling 8x slower, grouped convolutions' new layout transforms).
    basis = group_norm
                ? fmt::format(
                      "this job runs GroupNorm, which has no NHWC kernels: channels_last tensors are copied back "
                      "to NCHW around it, so the convolution library's layout transposes stay (as copies); "
                      "the NCHW batch-norm kernels x {:.2f} (cuDNN's NHWC ones); every other kernel as traced",
                      kNhwcBatchNormScale)
                : fmt::format(
                      "the convolution library's layout transposes (cuDNN's nchwToNhwc and nhwcToNchw, MIOpen's "
                      "batched_transpose) removed from the GPU's work, the NCHW batch-norm kernels x {:.2f} "
                      "(cuDNN's NHWC ones); their launches and every other kernel as traced",
                      kNhwcBatchNormScale);
    return true;
  }
};

}  // namespace

const Fix& channelsLastFix() {
  static const ChannelsLastFix fix;
  return fix;
}

}  // namespace gpudoctor
