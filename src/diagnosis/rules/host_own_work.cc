// The training thread spends the step on work of its own that launches nothing: building or
// tokenizing batches, metrics, logging. That is not launch overhead, and launching less won't help.
#include <fmt/format.h>

#include "analysis/host_work.h"
#include "diagnosis/rules/registry.h"

namespace gpudoctor {
namespace {

constexpr ThresholdDecl kHostOwnWorkMax{"host_own_work_max",
                                        0.10,
                                        0,
                                        1,
                                        "ratio",
                                        "share of the step the training thread spends on work that launches nothing"};

class HostOwnWork : public Rule {
 public:
  std::string_view id() const override { return "host.own_work"; }
  std::vector<const ThresholdDecl*> thresholds() const override { return {&kHostOwnWorkMax}; }
  void evaluate(const Facts& f, const Thresholds& th, std::vector<Finding>& out) const override {
    const double own = f.host_own_work;
    if (own <= 0 || f.share(own) <= th.get(kHostOwnWorkMax)) return;
    Finding x =
        gainFinding(f, th, "host.own_work",
                    fmt::format("The training thread spends {:.2f} ms a step ({:.0f}% of it) on work of its own "
                                "that launches no GPU work",
                                ms(own), pct(f.share(own))),
                    own, "the host's own work per step, moved off the training thread (upper bound)");
    x.evidence = {{"host's own work", ms(own), "ms/step"},
                  {"stretches counted", static_cast<double>(kHostWorkMinNs) / 1e3, "us or longer"}};
    x.explanation =
        "Stretches of host time with no operator and no CUDA call: Python building or tokenizing the "
        "batch, metrics, logging or checkpoint bookkeeping on the training thread. The GPU waits for it "
        "unless it runs elsewhere.";
    x.fix = {"# build or tokenize batches in the DataLoader's worker processes (its Dataset or collate_fn),",
             "# not in the training loop; log every N steps; save checkpoints asynchronously",
             "# (torch.distributed.checkpoint.async_save)"};
    out.push_back(std::move(x));
  }
};

}  // namespace

const Rule& hostOwnWorkRule() {
  static const HostOwnWork r;
  return r;
}

}  // namespace gpudoctor
