// Fix `host_work_off_thread`: the host's own work (analysis/host_work.h) moved into DataLoader workers.
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "diagnosis/fixes/registry.h"

namespace gpudoctor {
namespace {

// The host_work_off_thread fix: the host's own work moved into this many DataLoader workers.
inline constexpr int kHostWorkWorkers = 4;

class HostWorkOffThreadFix : public Fix {
 public:
  std::string_view id() const override { return "host_work_off_thread"; }
  std::vector<std::string_view> answers() const override { return {"host.own_work"}; }
  std::string_view category() const override { return "host_launch"; }
  bool edit(const FixInputs& in, ReplayEdits& ed, std::string& basis) const override {
    const RunAnalysis* run = in.run;
    double per_step = 0;  // the host's own work per step (mean over ranks)
    if (run)
      for (const RankAnalysis& r : run->ranks)
        per_step += r.host_work.per_step_ns / static_cast<double>(run->ranks.size());
    if (per_step <= 0) return false;
    ed.host_work_off_thread = true;
    ed.loader_period_ns = std::max<int64_t>(ed.loader_period_ns, std::llround(per_step / kHostWorkWorkers));
    basis = fmt::format(
        "the host's own work ({:.2f} ms/step of stretches with no operator and no CUDA call) leaves the "
        "training thread for {} DataLoader workers, which deliver it every {:.2f} ms",
        per_step / 1e6, kHostWorkWorkers, per_step / kHostWorkWorkers / 1e6);
    return true;
  }
};

}  // namespace

const Fix& hostWorkOffThreadFix() {
  static const HostWorkOffThreadFix fix;
  return fix;
}

}  // namespace gpudoctor
