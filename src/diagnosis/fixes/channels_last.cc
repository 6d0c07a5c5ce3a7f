// Fix `channels_last`: the model and its input batches in torch.channels_last: cuDNN's convolutions read
// and write NHWC tensors as they are, without the NCHW<->NHWC transposes it runs around each of them.
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
    basis =
        "cuDNN's NCHW<->NHWC layout transposes (nchwToNhwc, nhwcToNchw kernels) removed from the GPU's work; their "
        "launch calls and every other kernel stay as traced (the NCHW batch-norm and pooling kernels that "
        "channels_last also replaces are kept: an operator without NHWC kernels, GroupNorm for one, copies its "
        "input back to NCHW instead)";
    return true;
  }
};

}  // namespace

const Fix& channelsLastFix() {
  static const ChannelsLastFix fix;
  return fix;
}

}  // namespace gpudoctor
