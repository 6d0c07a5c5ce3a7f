// The what-if's DataLoader pool (what_if_pool.h).
#include "diagnosis/what_if_pool.h"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "diagnosis/rule.h"
#include "diagnosis/rules/fixes.h"

namespace gpudoctor {
namespace {

// What the loader finding's gain is on the un-profiled step's basis (addPoolFinding, restateLoaderBound).
constexpr const char* kPoolHeld =
    "the time the loader pool alone holds the un-profiled step: the step less the largest of the host's, "
    "the GPU's and the busiest stream's periods";

// ... as a bound, or, where the pool's period is not identified (StepWhatIf::pool_period_unidentified),
// as an estimate.
std::string poolGainBasis(const StepWhatIf& w) {
  if (!w.pool_period_unidentified) return fmt::format("{} (upper bound)", kPoolHeld);
  return fmt::format(
      "{}; an estimate, not a bound: {} of the {} fetches in the steps waited for their batch, so the pool's "
      "period is the steps' mean, which a burst's wait or a prefetch queue still emptying moves either way",
      kPoolHeld, w.pool_waited_fetches, w.pool_fetches);
}

}  // namespace

// Where a DataLoader pool sets the un-profiled step without the steps giving its period, says so in `w`.
void notePoolPeriod(const ReplayModel& model, const ReplayEdits& unprofiled, StepWhatIf& w) {
  if (unprofiled.loader_period_ns <= 0 || w.unprofiled_parts.bound != "loader") return;
  const LoaderPool pool = model.loaderPool();
  if (pool.periodIdentified()) return;
  w.pool_period_unidentified = true;
  w.pool_waited_fetches = pool.waited;
  w.pool_fetches = pool.fetches;
}

// Where a DataLoader pool sets the un-profiled step but the trace's GPU idle inside next() stayed under
// the io_wait_max threshold (the profiler slowed the host nearly to the pool's pace, so the traced
// fetches hardly waited), the rule sees no loader problem; the replay does. The finding is added from
// the replay of the un-profiled job where the pool holds more than io_wait_max of that step: its bound
// is the pool's period less the largest of the host's, the GPU's and the busiest stream's, graded as
// the rules grade a bound (min_gain_share, critical_gain_share). Returns the replay of the un-profiled
// job where it ran one, for predictFixes to use rather than run again.
std::optional<Replay> addPoolFinding(Diagnosis& d, const ReplayModel& model, const ReplayEdits& unprofiled,
                                     const Thresholds& th) {
  if (unprofiled.loader_period_ns <= 0) return std::nullopt;
  for (const Finding& f : d.findings)
    if (f.id == "input.loader_on_critical_path") return std::nullopt;
  Replay base = model.replay(unprofiled);
  const SteadyState& s = base.replayed;
  if (!base.available || s.bound != StepBound::kLoader || s.period_ns <= 0) return base;
  const double held = s.period_ns - std::max({s.host_ns, s.gpu_period_ns, s.busy_ns});
  const double share = held / s.period_ns;
  if (share <= th.get(guide::kIoWaitMax)) return base;
  const LoaderPool pool = model.loaderPool();
  Finding x;
  x.id = "input.loader_on_critical_path";
  x.title = fmt::format(
      "The DataLoader's workers set the un-profiled step: a batch every {:.2f} ms, while the training thread "
      "needs {:.2f} ms and the GPU {:.2f} ms",
      s.loader_ns / 1e6, s.host_ns / 1e6, std::max(s.gpu_period_ns, s.busy_ns) / 1e6);
  x.gain_ms_per_step = held / 1e6;
  x.gain_share = share;
  x.gain_basis = poolGainBasis(StepWhatIf{});  // restated once the steps are set (restateLoaderBound)
  x.severity = share >= th.get(kCriticalGainShare) ? Severity::kCritical
               : share >= th.get(kMinGainShare)    ? Severity::kWarning
                                                   : Severity::kInfo;
  x.evidence = {{"loader pool's delivery period", s.loader_ns / 1e6, "ms/step"},
                {"DataLoader next() (traced)", pool.wait_per_step_ns / 1e6, "ms/step"},
                {"host's un-profiled step", s.host_ns / 1e6, "ms/step"}};
  x.explanation =
      pool.periodIdentified()
          ? "The loader does not keep up: without the profiler the training thread would wait in next() for each "
            "batch. In the trace it hardly waited because the profiler slowed the thread to nearly the pool's pace."
          : "The loader may not keep up: the training thread waited in next() for a batch in the traced steps, too "
            "few times to give the pool's pace; the step is taken as the steps' mean, which the pool may not "
            "hold once its prefetched batches run out.";
  x.fix = fixes::input();
  d.findings.push_back(std::move(x));
  return base;
}

// Where a DataLoader pool sets the un-profiled step, the loader finding's bound is restated on that
// step's basis: the time the pool alone holds it, the step less the largest of the host's, the GPU's and
// the busiest stream's periods (no number of workers takes it lower). The trace's GPU idle inside next()
// is another basis: the profiler slows the host, and after each long wait the GPU idles again while the
// host relaunches, so the traced idle undercounts what the pool holds.
void restateLoaderBound(Diagnosis& d) {
  const StepWhatIf::Parts& p = d.what_if.unprofiled_parts;
  if (p.bound != "loader" || d.what_if.unprofiled_step_ns <= 0) return;
  const int64_t floor = std::max({p.host_ns, p.gpu_ns, p.busy_ns});
  const int64_t held = d.what_if.unprofiled_step_ns - floor;
  if (held <= 0) return;
  for (Finding& f : d.findings) {
    if (f.id != "input.loader_on_critical_path") continue;
    f.gain_ms_per_step = static_cast<double>(held) / 1e6;
    f.gain_share = static_cast<double>(held) / static_cast<double>(d.what_if.unprofiled_step_ns);
    f.gain_is_estimate = d.what_if.pool_period_unidentified;
    f.floor_step_ms = static_cast<double>(floor) / 1e6;
    f.gain_basis = poolGainBasis(d.what_if);
  }
}

}  // namespace gpudoctor
