// The GPU idles behind blocking host synchronizations (.item(), .cpu(), cudaStreamSynchronize,
// blocking copies) outside data loading.
#include <fmt/format.h>

#include "diagnosis/rules/fixes.h"
#include "diagnosis/rules/registry.h"

namespace gpudoctor {
namespace {

constexpr ThresholdDecl kSyncIdleMax{
    "sync_idle_max", 0.05, 0, 1, "ratio", "share of the step the GPU idles behind a blocking host synchronization"};

class BlockingSync : public Rule {
 public:
  std::string_view id() const override { return "sync.blocking"; }
  std::vector<const ThresholdDecl*> thresholds() const override { return {&kSyncIdleMax}; }
  void evaluate(const Facts& f, const Thresholds& th, std::vector<Finding>& out) const override {
    const auto& m = f.mean;
    double idle = m.idle_sync - m.idle_sync_loader;  // the loader's own waits are the loader rule's
    // The operators that synchronized inside the step (the job profile: only where a blocking call
    // ran under them): a sync costs the overlap of host and GPU even where the idle it shows is small.
    std::vector<const HostSync*> ops;
    // A blocking host-to-device copy (pageable memory) is the pageable-copies rule's: pinning fixes it.
    // A per-expert MoE dispatch's nonzero syncs are the MoE rule's: a grouped dispatch removes them.
    for (const HostSync& s : f.job.host_syncs)
      if (!s.op.empty() && s.count_per_step >= 1 && s.copy.rfind("HtoD", 0) != 0 &&
          !(f.moe.found() && (s.op == "aten::nonzero" || s.op == "aten::masked_select")))
        ops.push_back(&s);
    if (f.share(idle) <= th.get(kSyncIdleMax) && ops.empty()) return;
    std::string what;
    for (const HostSync* s : ops)
      what += fmt::format("{}{} {:.0f}/step{}", what.empty() ? "" : ", ", s->op, s->count_per_step,
                          s->caller.empty() ? "" : " in " + s->caller);
    Finding x = gainFinding(
        f, th, "sync.blocking",
        what.empty()
            ? fmt::format("The GPU idles {:.1f}% of the step behind blocking host synchronizations", pct(f.share(idle)))
            : fmt::format("Host synchronizations inside the step: {} (GPU idle behind them {:.1f}%)", what,
                          pct(f.share(idle))),
        std::max(0.0, m.wall - m.busy),
        "the GPU's idle time per step: without the syncs the GPU's own work stays, and the step cannot be shorter "
        "(upper bound; the replay says how much of it the host's overlap recovers)");
    x.evidence = {{"idle: sync", ms(idle), "ms/step"},
                  {"host blocked in sync calls", ms(m.sync), "ms/step"},
                  {"sync share", pct(f.share(idle)), "%"}};
    for (const HostSync* s : ops)
      x.evidence.push_back(
          {s->op + " (" + (s->copy.empty() ? s->call : s->copy + ", " + s->call) + ")", s->count_per_step, "per step"});
    x.explanation =
        "The host waits for the GPU to finish (a value read back, a blocking copy, a stream sync), "
        "then the GPU waits for the host to launch again: neither side overlaps the other.";
    bool item = ops.empty(), nonzero = ops.empty(), to_cpu = ops.empty(), scaler = false;
    for (const HostSync* s : ops) {
      item |= (s->op == "aten::item" || s->op == "aten::_local_scalar_dense") && s->caller != "GradScaler";
      nonzero |= s->op == "aten::nonzero" || s->op == "aten::masked_select";
      to_cpu |= s->op == "aten::to" || s->op == "aten::copy_" || s->op == "aten::_to_copy";
      scaler |= s->caller == "GradScaler";
    }
    if (item || to_cpu) x.fix = fixes::sync();
    if (nonzero)
      x.fix.push_back("# boolean-mask indexing syncs (nonzero): use torch.where(mask, x, 0) instead of x[mask]");
    if (to_cpu) x.fix.push_back("y = x.to(\"cpu\", non_blocking=True)   # into pinned memory, read after an event");
    if (scaler)
      x.fix.push_back("# GradScaler reads its inf check back once per optimizer step: bf16 autocast needs no scaler");
    out.push_back(std::move(x));
  }
};

}  // namespace

const Rule& blockingSyncRule() {
  static const BlockingSync r;
  return r;
}

}  // namespace gpudoctor
