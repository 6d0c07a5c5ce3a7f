// Fix `loader_workers`: more DataLoader workers (a pool that sets the step: 2x, its alternative 4x; an
// in-process loader: 8 workers).
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "diagnosis/fixes/loader_workers.h"
#include "diagnosis/fixes/registry.h"

namespace gpudoctor {
namespace {

// The loader_workers fix: a pool that sets the step gets this many times its workers; an in-process
// loader (num_workers=0) gets kLoaderNewWorkers (the advice's num_workers), each producing a batch in
// the time the training thread took.
inline constexpr double kLoaderWorkerFactor = 2;
inline constexpr int kLoaderNewWorkers = 8;

class LoaderWorkersFix : public Fix {
 public:
  std::string_view id() const override { return "loader_workers"; }
  std::vector<std::string_view> answers() const override { return {"input.loader_on_critical_path"}; }
  std::string_view category() const override { return "input"; }
  std::string_view alternative() const override { return "loader_workers_x4"; }
  bool edit(const FixInputs& in, ReplayEdits& ed, std::string& basis) const override {
    const RunAnalysis* run = in.run;
    if (morePoolWorkers(run, kLoaderWorkerFactor, ed, basis)) return true;
    double per_step = 0;  // the in-process loader's host time per step (mean over ranks)
    if (run)
      for (const RankAnalysis& r : run->ranks)
        if (!r.steps.empty())
          per_step += static_cast<double>(r.total.dataloader_ns) / static_cast<double>(r.steps.size()) /
                      static_cast<double>(run->ranks.size());
    ed.loader_off_thread = true;
    ed.loader_period_ns = std::llround(per_step / kLoaderNewWorkers);
    basis = fmt::format(
        "the in-process DataLoader's host time ({:.2f} ms/step) leaves the training thread for {} "
        "workers, which deliver a batch every {:.2f} ms",
        per_step / 1e6, kLoaderNewWorkers, per_step / kLoaderNewWorkers / 1e6);
    return true;
  }
};

}  // namespace

bool morePoolWorkers(const RunAnalysis* run, double factor, ReplayEdits& ed, std::string& basis) {
  if (ed.loader_period_ns <= 0) return false;
  ed.loader_period_ns = std::llround(static_cast<double>(ed.loader_period_ns) / factor);
  basis = fmt::format(
      "{:.0f}x the DataLoader's workers{}: the pool delivers a batch every {:.2f} ms (its traced "
      "delivery period / {:.0f}), and the training thread's waits in next() shrink to a ready "
      "batch's hand-off (its shortest fetch); needs as many free CPU cores",
      factor,
      run && run->job.loader_workers
          ? fmt::format(" ({} -> {})", *run->job.loader_workers, std::llround(*run->job.loader_workers * factor))
          : "",
      static_cast<double>(ed.loader_period_ns) / 1e6, factor);
  return true;
}

const Fix& loaderWorkersFix() {
  static const LoaderWorkersFix fix;
  return fix;
}

}  // namespace gpudoctor
