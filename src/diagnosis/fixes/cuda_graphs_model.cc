// Fix `cuda_graphs_model`: torch.compile(mode="reduce-overhead") of the model alone: the alternative cuda_graphs'
// prediction names.
#include "diagnosis/fixes/cuda_graphs.h"

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "diagnosis/fixes/registry.h"

namespace gpudoctor {
namespace {

class CudaGraphsModelFix : public Fix {
 public:
  std::string_view id() const override { return "cuda_graphs_model"; }
  std::vector<std::string_view> answers() const override { return {}; }
  std::string_view category() const override { return ""; }
  bool edit(const FixInputs& in, ReplayEdits& ed, std::string& basis) const override {
    const RunAnalysis* run = in.run;
    // A GradScaler job's cuda_graphs prediction is already the model alone graphed; a job with graphs has them.
    if (!run || run->job.param_tensors <= 0 || run->job.grad_scaler || run->job.cuda_graphs) return false;
    if (ed.sparse_embedding_table_ns > 0) return false;  // the sparse backward's syncs: not capturable
    ed = modelGraphedEdits(ed, run->job.param_tensors);
    basis = fmt::format(
        "torch.compile(mode=\"reduce-overhead\") of the model alone: its forward and backward passes "
        "graphed, the optimizer step, the loss and each gradient's accumulation eager; each graphed "
        "pass costs the host {:.0f} + {:.1f} operators' time per parameter ({:.0f} parameters; .grad set to "
        "None each step; measured un-profiled, in the host's time per recorded operator)",
        kGraphedPassOps, kGraphedParamOps, run->job.param_tensors);
    return true;
  }
};

}  // namespace

const Fix& cudaGraphsModelFix() {
  static const CudaGraphsModelFix fix;
  return fix;
}

}  // namespace gpudoctor
