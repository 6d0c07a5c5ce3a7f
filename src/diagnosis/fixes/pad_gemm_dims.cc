// Fix `pad_gemm_dims`: a GEMM dimension that is not a multiple of 8 (an LM head's vocabulary) padded to
// a multiple of 64: its fallback kernels run as aligned ones.
#include "diagnosis/fixes/pad_gemm_dims.h"

#include <string>

#include <fmt/format.h>

#include "diagnosis/fixes/registry.h"

namespace gpudoctor {
namespace {

class PadGemmDimsFix : public Fix {
 public:
  std::string_view id() const override { return "pad_gemm_dims"; }
  std::vector<std::string_view> answers() const override { return {"gemm.misaligned"}; }
  std::string_view category() const override { return "compute"; }
  bool edit(const FixInputs&, ReplayEdits& ed, std::string& basis) const override {
    ed.misaligned_gemm_scale = kPaddedGemmShare;
    basis = fmt::format(
        "the tensor-core GEMMs on operands aligned to 2, 4 or 8 bytes at x {:.2f}, {:.2f} and {:.2f} of their time "
        "(the aligned kernels' rate for the same work, measured on LM heads of odd vocabularies; the padded rows' "
        "extra work is under 0.2 %)",
        kPaddedGemmShare[0], kPaddedGemmShare[1], kPaddedGemmShare[2]);
    return true;
  }
};

}  // namespace

const Fix& padGemmDimsFix() {
  static const PadGemmDimsFix fix;
  return fix;
}

}  // namespace gpudoctor
