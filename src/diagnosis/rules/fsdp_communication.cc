// FSDP / ZeRO: the all-gathers of the parameters and reduce-scatters of the gradients that no
// computation hides, with the wrappers' own knobs (prefetch, reshard, rate limit) and, where the
// model is small enough, DDP instead (one all-reduce per bucket, no re-gathering).
#include <cctype>

#include <fmt/format.h>

#include "analysis/collectives.h"
#include "diagnosis/rules/registry.h"

namespace gpudoctor {
namespace {

// Share of the device's memory under which the replicated model (DDP) is said to fit.
constexpr ThresholdDecl kFitsDdpShare{"fsdp_fits_ddp_share",
                                      0.5,
                                      0,
                                      1,
                                      "ratio",
                                      "replicated model state (16 B per parameter, AdamW with FP32 master weights) "
                                      "below this share of the GPU's memory: DDP fits"};

std::string squash(std::string_view s) {
  std::string o;
  for (char c : s)
    if (c != '_' && c != ' ') o += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return o;
}

class FsdpCommunication : public Rule {
 public:
  std::string_view id() const override { return "communication.fsdp"; }
  std::vector<const ThresholdDecl*> thresholds() const override { return {&guide::kCommShareMax, &kFitsDdpShare}; }
  void evaluate(const Facts& f, const Thresholds& th, std::vector<Finding>& out) const override {
    const std::string& dp = f.job.data_parallel;
    if (dp != "fsdp" && dp != "zero") return;
    const double exposed = f.share(f.mean.comm_exposed), max = th.get(guide::kCommShareMax);
    if (exposed <= max) return;
    // All-gathers and reduce-scatters by kind; the gathered bytes tell the model's size.
    double ag_ns = 0, rs_ns = 0, ag_bytes = 0, ag_elem_bytes = 2;
    for (const auto& c : f.collectives) {
      const std::string k = squash(c.collective);
      if (k.find("allgather") != std::string::npos) {
        ag_ns += c.total_ns;
        ag_bytes += static_cast<double>(c.bytes) * static_cast<double>(c.count);
        if (int b = dtypeBytes(c.dtype); b > 0) ag_elem_bytes = b;
      } else if (k.find("reducescatter") != std::string::npos) {
        rs_ns += c.total_ns;
      }
    }
    Finding x = gainFinding(
        f, th, "communication.fsdp",
        fmt::format("{}: exposed communication {:.1f}% of the step (all-gather {:.2f}, reduce-scatter {:.2f} ms/step)",
                    dp == "fsdp" ? "FSDP" : "ZeRO", pct(exposed), ms(f.perStep(ag_ns)), ms(f.perStep(rs_ns))),
        f.mean.comm_exposed, "exposed communication per step (upper bound: perfect overlap)");
    x.evidence = {{"exposed", ms(f.mean.comm_exposed), "ms/step"},
                  {"all-gather kernels", ms(f.perStep(ag_ns)), "ms/step"},
                  {"reduce-scatter kernels", ms(f.perStep(rs_ns)), "ms/step"}};
    x.explanation =
        "Each block's parameters are all-gathered before its forward and backward and its gradients "
        "reduce-scattered after; without prefetching, the next block's gather waits for the current "
        "block's compute to finish, and nothing hides it.";
    x.fix = {"# FSDP1: gather the next block while this one computes, and bound the gathers in flight:",
             "model = FSDP(model, forward_prefetch=True, backward_prefetch=BackwardPrefetch.BACKWARD_PRE,",
             "             limit_all_gathers=True)",
             "# FSDP2: keep gathered parameters from forward to backward (more memory, one gather less):",
             "fully_shard(block, reshard_after_forward=False)   # or block.set_modules_to_forward_prefetch([next])"};
    // Parameters from the gathered bytes: FULL_SHARD gathers each parameter twice a step (forward and
    // backward), and each rank receives the whole of it.
    // (SHARD_GRAD_OP gathers once: the estimate is then twice too large, never too small.)
    const double params = f.perStep(ag_bytes) / 2 / ag_elem_bytes;
    if (params > 0 && f.device_bytes > 0) {
      const double replicated = 16 * params;
      x.evidence.push_back({"parameters (from the all-gathers)", params / 1e6, "M"});
      constexpr double kGiB = 1024.0 * 1024 * 1024;  // memory in GiB, as every report shows it
      x.evidence.push_back({"replicated state under DDP", replicated / kGiB, "GiB"});
      if (replicated < th.get(kFitsDdpShare) * static_cast<double>(f.device_bytes)) {
        x.explanation += fmt::format(
            " The model is small: about {:.0f} M parameters, {:.1f} GiB of weights, gradients and AdamW state "
            "replicated, {:.0f} % of the GPU's {:.0f} GiB, so DDP fits and needs one all-reduce per gradient bucket "
            "instead of a gather per block per pass.",
            params / 1e6, replicated / kGiB, 100 * replicated / static_cast<double>(f.device_bytes),
            static_cast<double>(f.device_bytes) / kGiB);
        x.fix.push_back("# or, since the model fits: model = DDP(model, gradient_as_bucket_view=True)");
      }
    }
    out.push_back(std::move(x));
  }
};

}  // namespace

const Rule& fsdpCommunicationRule() {
  static const FsdpCommunication r;
  return r;
}

}  // namespace gpudoctor
