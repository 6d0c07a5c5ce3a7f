// Fix `channels_last`: the model and its input batches in torch.channels_last: cuDNN's convolutions read
// and write NHWC tensors as they are, without the NCHW<->NHWC transposes it (or MIOpen) runs around each of them.
#include "diagnosis/fixes/registry.h"

namespace gpudoctor {
namespace {

class ChannelsLastFix : public Fix {
 public:
  std::string_view id() const override { return "channels_last"; }
  std::vector<std::string_view> answers() const override { return {"layout.channels_last"}; }
  std::string_view category() const override { return "compute"; }
  bool edit(const FixInputs&, ReplayEdits& ed, std::string& basis) const override {
    ed.drop_layout_transposes = true;
    // The NCHW batch-norm and pooling kernels stay too: an operator without NHWC kernels (GroupNorm)
    // copies its input back to NCHW instead, so their gain is not certain.
    basis =
        "the convolution library's layout transposes (cuDNN's nchwToNhwc and nhwcToNchw, MIOpen's batched_transpose) "
        "removed from the GPU's work; their launches and every other kernel as traced";
    return true;
  }
};

}  // namespace

const Fix& channelsLastFix() {
  static const ChannelsLastFix fix;
  return fix;
}

}  // namespace gpudoctor
