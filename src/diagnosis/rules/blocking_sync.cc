// The GPU idles behind blocking host synchronizations (.item(), .cpu(), cudaStreamSynchronize,
// blocking copies) outside data loading.
#include <fmt/format.h>

#include "diagnosis/rules/fixes.h"
#include "diagnosis/rules/registry.h"

namespace gpudoctor {
namespace {

constexpr ThresholdDecl kSyncIdleMax{"sync_idle_max", 0.05, 0, 1, "ratio",
                                     "share of the step the GPU idles behind a blocking host synchronization"};

class BlockingSync : public Rule {
 public:
  std::string_view id() const override { return "sync.blocking"; }
  std::vector<const ThresholdDecl*> thresholds() const override { return {&kSyncIdleMax}; }
  void evaluate(const Facts& f, const Thresholds& th, std::vector<Finding>& out) const override {
    const auto& m = f.mean;
    double idle = m.idle_sync - m.idle_sync_loader;  // the loader's own waits are the loader rule's
    if (f.share(idle) <= th.get(kSyncIdleMax)) return;
    Finding x = gainFinding(f, th, "sync.blocking",
                            fmt::format("The GPU idles {:.1f}% of the step behind blocking host synchronizations",
                                        pct(f.share(idle))),
                            idle, "GPU idle time while the launching thread was blocked in a sync call (upper bound)");
    x.evidence = {{"idle: sync", ms(idle), "ms/step"}, {"host blocked in sync calls", ms(m.sync), "ms/step"},
                  {"sync share", pct(f.share(idle)), "%"}};
    x.explanation = "The host waits for the GPU to finish (a value read back, a blocking copy, a stream sync), "
                    "then the GPU waits for the host to launch again: neither side overlaps the other.";
    x.fix = fixes::sync();
    x.fix.insert(x.fix.end(), {"# boolean-mask indexing syncs (nonzero): use torch.where(mask, x, 0) instead of x[mask]",
             "y = x.to(\"cpu\", non_blocking=True)   # into pinned memory, read after an event"});
    out.push_back(std::move(x));
  }
};

}  // namespace

const Rule& blockingSyncRule() {
  static const BlockingSync r;
  return r;
}

}  // namespace gpudoctor
