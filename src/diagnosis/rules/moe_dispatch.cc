// A mixture-of-experts layer dispatches tokens expert by expert (analysis/moe_dispatch.h): a host
// sync and a few small GEMMs per expert, where a fixed-capacity dispatch batches the experts.
#include <fmt/format.h>

#include "diagnosis/rules/registry.h"

namespace gpudoctor {
namespace {

class MoeDispatchRule : public Rule {
 public:
  std::string_view id() const override { return "moe.per_expert_dispatch"; }
  void evaluate(const Facts& f, const Thresholds& th, std::vector<Finding>& out) const override {
    const MoeFacts& m = f.moe;
    if (!m.found()) return;
    Finding x = gainFinding(
        f, th, "moe.per_expert_dispatch",
        fmt::format("Mixture-of-experts layers dispatch tokens expert by expert: {:.0f} layers x {} experts, "
                    "{:.0f} host syncs a step",
                    m.layers, m.experts, m.syncs),
        std::max(0.0, f.mean.wall - f.mean.busy),
        "the GPU's idle time per step: a grouped dispatch removes the syncs and most launches, while the "
        "experts' own work stays and grows by the padding to capacity (upper bound; the replay says how much "
        "the host's overlap recovers and what the padding costs)");
    x.evidence = {{"MoE layers (per-expert loops in forward)", m.layers, "per step"},
                  {"experts per layer", static_cast<double>(m.experts), ""},
                  {"operators per expert (forward)", static_cast<double>(m.ops_per_expert), ""},
                  {"host syncs in the loops", m.syncs, "per step"},
                  {"host blocked in them", ms(m.sync_ns), "ms/step"},
                  {"host time in the loops (forward and backward)", ms(m.host_ns), "ms/step"}};
    x.explanation =
        "Each expert's tokens are found with an operator whose output size depends on the data (nonzero, "
        "a boolean index, torch.where(mask)): the host waits for the GPU once per expert, then launches that "
        "expert's small GEMMs, so the GPU idles at every turn and the launches scale with the experts.";
    x.fix = {
        "# fixed-capacity dispatch: no host sync, the experts batched (capacity factor 1.0-1.25; overflow dropped)",
        "cap = math.ceil(top_k * n_tokens / n_experts * 1.25)",
        "pos = (F.one_hot(expert, n_experts).cumsum(0) - 1).gather(1, expert[:, None])  # slot within its expert",
        "h = torch.bmm(buf.view(n_experts, cap, d), w1)   # experts' weights stacked (E, d, ff)",
        "# or a grouped-GEMM MoE kernel (torch._grouped_mm, megablocks, DeepSpeed-MoE)"};
    out.push_back(std::move(x));
  }
};

}  // namespace

const Rule& moeDispatchRule() {
  static const MoeDispatchRule r;
  return r;
}

}  // namespace gpudoctor
