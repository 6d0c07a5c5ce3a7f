#include "report/step_notes.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

namespace gpudoctor {

// Windows are cut at the host's step marks. Where the host ran ahead of the GPU, the windows show the
// host's period and the last one holds the GPU's backlog: say so, or that window reads as a slow step.
std::string hostAheadNote(const RankAnalysis& r) {
  if (r.steps.size() < 3) return {};
  std::vector<int64_t> walls;
  for (size_t i = 0; i + 1 < r.steps.size(); ++i) walls.push_back(r.steps[i].wall_ns);
  std::nth_element(walls.begin(), walls.begin() + walls.size() / 2, walls.end());
  const int64_t mid = walls[walls.size() / 2], last = r.steps.back().wall_ns;
  const int64_t lat = r.total.launch_latency.count ? r.total.launch_latency.p50_ns : 0;
  if (mid <= 0 || last < 2 * mid || lat <= mid) return {};
  return fmt::format(
      "the host ran ahead of the GPU (median launch latency {:.1f} ms): each window shows the host's period "
      "({:.3f} ms in the median) and the last one ({:.3f} ms) holds the GPU's backlog: here a window is not "
      "the loop's step.",
      lat / 1e6, mid / 1e6, last / 1e6);
}

}  // namespace gpudoctor
