// Fix `straggler_at_median`: the slowest rank at its peers' median pace.
#include <cmath>
#include <string>

#include <fmt/format.h>

#include <algorithm>
#include "diagnosis/fixes/registry.h"

namespace gpudoctor {
namespace {

class StragglerAtMedianFix : public Fix {
 public:
  std::string_view id() const override { return "straggler_at_median"; }
  std::vector<std::string_view> answers() const override { return {"communication.straggler"}; }
  std::string_view category() const override { return "communication"; }
  bool edit(const FixInputs& in, ReplayEdits& ed, std::string& basis) const override {
    const RunAnalysis* run = in.run;
    if (!run || run->ranks.size() < 2) return false;
    // Each rank's own time per step: its step less what it waited inside collectives for others.
    std::vector<double> own;
    for (const auto& r : run->ranks) {
      const double steps = std::max<double>(1, static_cast<double>(r.steps.size()));
      int64_t wait = 0;
      for (const auto& w : run->straggler.ranks)
        if (w.rank == r.trace->rank) wait = w.wait_ns;
      own.push_back((static_cast<double>(r.total.wall_ns) - static_cast<double>(wait)) / steps);
    }
    size_t slow = static_cast<size_t>(std::max_element(own.begin(), own.end()) - own.begin());
    for (size_t k = 0; k < run->ranks.size(); ++k)  // the straggler analysis's verdict first
      if (run->ranks[k].trace->rank == run->straggler.straggler) slow = k;
    std::vector<double> others;
    for (size_t k = 0; k < own.size(); ++k)
      if (k != slow) others.push_back(own[k]);
    std::sort(others.begin(), others.end());
    const double median =
        others.size() % 2 ? others[others.size() / 2] : (others[others.size() / 2 - 1] + others[others.size() / 2]) / 2;
    if (own[slow] <= 0 || median >= own[slow]) return false;
    const double scale = median / own[slow];
    ed.rank_compute_scale.assign(run->ranks.size(), 1.0);
    ed.rank_host_scale.assign(run->ranks.size(), 1.0);
    ed.rank_compute_scale[slow] = ed.rank_host_scale[slow] = scale;
    basis = fmt::format(
        "rank {}'s own time ({:.2f} ms/step: its step less its waits in collectives) at its peers' "
        "median ({:.2f} ms/step): its host time and compute kernels x {:.3f}, collectives joined at "
        "the new arrivals",
        run->ranks[slow].trace->rank, own[slow] / 1e6, median / 1e6, scale);
    return true;
  }
};

}  // namespace

const Fix& stragglerAtMedianFix() {
  static const StragglerAtMedianFix fix;
  return fix;
}

}  // namespace gpudoctor
