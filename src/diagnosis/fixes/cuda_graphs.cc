// Fix `cuda_graphs`: the step captured in a CUDA graph (launches free; the optimizer eager under GradScaler).
#include "diagnosis/fixes/cuda_graphs.h"

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "diagnosis/fixes/registry.h"

namespace gpudoctor {
namespace {

class CudaGraphsFix : public Fix {
 public:
  std::string_view id() const override { return "cuda_graphs"; }
  std::string_view alternative() const override { return "cuda_graphs_model"; }
  std::vector<std::string_view> answers() const override { return {"launch.overhead"}; }
  std::string_view category() const override { return "host_launch"; }
  bool edit(const FixInputs& in, ReplayEdits& ed, std::string& basis) const override {
    const RunAnalysis* run = in.run;
    if (ed.sparse_embedding_table_ns > 0) return false;  // sparse gradients sync once a table: not capturable
    ed.free_launches = true;
    basis =
        "launch calls and the host gaps between them cost nothing (the step replayed as a graph); the "
        "loader's and the syncs' host time stay";
    // Captured, an unfused Adam(W) step runs with capturable=True: its bias corrections on the GPU.
    const bool captured_adam = run && !run->job.grad_scaler && !ed.fused_optimizer &&
                               (run->job.optimizer == "Adam" || run->job.optimizer == "AdamW");
    if (run && run->job.grad_scaler) {
      ed.graph_keeps_optimizer = true;
      basis +=
          "; GradScaler's step reads its inf check on the host, so the optimizer step stays eager (forward "
          "and backward graphed, e.g. torch.cuda.make_graphed_callables)";
      if (run->job.param_tensors > 0 && !run->job.cuda_graphs) {
        // What each graphed pass still costs the host, charged at its AccumulateGrad nodes (a job
        // that graphs already has that cost in its trace).
        ed = modelGraphedEdits(ed, run->job.param_tensors);
        basis += fmt::format(
            "; the loss stays eager, and each graphed forward and backward pass still costs the host "
            "{:.0f} + {:.1f} operators' time per parameter ({:.0f} parameters: static inputs copied in, two "
            "graph launches, an output detached and a gradient handed to .grad per parameter, .grad set to "
            "None each step; measured un-profiled, in the host's time per recorded operator)",
            kGraphedPassOps, kGraphedParamOps, run->job.param_tensors);
      }
    } else if (captured_adam && run->job.optimizer_impl == "loop") {
      ed.optimizer_kernel_add_ns = kCapturableLoopKernelAddNs;
      basis += fmt::format(
          "; the captured {} per-parameter loop runs with capturable=True, its bias corrections on the "
          "GPU: +{:.1f} us per optimizer kernel (22 kernels per parameter instead of 8, measured)",
          run->job.optimizer, kCapturableLoopKernelAddNs / 1e3);
    } else if (captured_adam && run->job.optimizer_impl == "foreach" && run->job.param_tensors > 0 &&
               run->job.optimizer_launches_per_step > 0) {
      // Spread over the optimizer's kernels: the replay adds time to kernels, not kernels.
      ed.optimizer_kernel_add_ns =
          std::llround(run->job.param_tensors * static_cast<double>(kCapturableForeachParamNs) /
                       run->job.optimizer_launches_per_step);
      ed.optimizer_gpu_scale = kCapturableForeachGpuScale;
      basis += fmt::format(
          "; the captured foreach {} runs with capturable=True, beta ** step per parameter on the GPU: "
          "+{:.1f} us per parameter ({:.0f} parameters) and its kernels x {:.2f} (measured)",
          run->job.optimizer, kCapturableForeachParamNs / 1e3, run->job.param_tensors, kCapturableForeachGpuScale);
    }
    return true;
  }
};

}  // namespace

const Fix& cudaGraphsFix() {
  static const CudaGraphsFix fix;
  return fix;
}

}  // namespace gpudoctor
