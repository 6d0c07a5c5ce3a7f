#include "analysis/fleet_focus.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "analysis/run_analysis.h"

namespace gpudoctor {

namespace {

std::string msText(double ns) { return fmt::format("{:.3f} ms", ns / 1e6); }

// Adds `rank` with a reason, or the reason to the rank already picked.
void pick(std::vector<FocusRank>& out, int rank, const char* reason, std::string why) {
  for (auto& r : out)
    if (r.rank == rank) {
      r.reasons.emplace_back(reason);
      r.why.push_back(std::move(why));
      return;
    }
  FocusRank r;
  r.rank = rank;
  r.reasons.emplace_back(reason);
  r.why.push_back(std::move(why));
  out.push_back(std::move(r));
}

struct Culprit {
  int rank = -1;
  const char* reason = "";
  std::string why;
};

// The straggler the cross-rank analyses name, with the group it holds back; else their first slow
// rank; else nobody (rank -1).
Culprit culprit(const FleetReport& f) {
  const StragglerReport s = stragglerOfGroups(f);
  if (s.straggler >= 0) {
    const FleetGroup* g = nullptr;
    for (const auto& x : f.groups)
      if (x.straggler == s.straggler && (!g || x.others_wait_ns > g->others_wait_ns)) g = &x;
    if (g)
      return {s.straggler, "straggler",
              fmt::format("straggler: holds back process group {}{}; the others wait {} per step for it", g->name,
                          g->desc.empty() ? "" : " (" + g->desc + ")", msText(g->others_wait_ns))};
  }
  if (!f.slow_ranks.empty()) {
    const SlowRank& r = f.slow_ranks.front();
    return {r.rank, "slow_rank",
            fmt::format("slow rank: +{} of own time per step in {} of {} steps ({})", msText(r.excess_ns),
                        r.steps_flagged, r.steps, r.cause)};
  }
  return {};
}

}  // namespace

std::vector<FocusRank> pickFocusRanks(const FleetReport& f, const std::vector<RankDigest>& digests) {
  std::vector<const FleetRank*> rows;
  for (const auto& r : f.rows)
    if (r.steps > 0) rows.push_back(&r);
  std::vector<FocusRank> out;
  if (rows.empty()) return out;
  // The slowest: the largest mean step; of equal steps the one with more own time (it waited less:
  // it is slow itself), then the lower rank.
  const FleetRank* slowest = *std::max_element(rows.begin(), rows.end(), [](const FleetRank* a, const FleetRank* b) {
    if (a->wall_ns != b->wall_ns) return a->wall_ns < b->wall_ns;
    if (a->own_ns != b->own_ns) return a->own_ns < b->own_ns;
    return a->rank > b->rank;
  });
  // The median: the middle rank (the lower of two) by mean step, equal steps in rank order.
  std::stable_sort(rows.begin(), rows.end(), [](const FleetRank* a, const FleetRank* b) {
    return a->wall_ns != b->wall_ns ? a->wall_ns < b->wall_ns : a->rank < b->rank;
  });
  const FleetRank* median = rows[(rows.size() - 1) / 2];
  pick(out, slowest->rank, "slowest", "slowest step: " + msText(slowest->wall_ns) + " per step");
  pick(out, median->rank, "median", "median step: " + msText(median->wall_ns) + " per step");
  if (Culprit c = culprit(f); c.rank >= 0) pick(out, c.rank, c.reason, std::move(c.why));
  std::map<int, const RankDigest*> by_rank;
  for (const auto& d : digests) by_rank[d.rank] = &d;
  for (auto& r : out)
    if (auto it = by_rank.find(r.rank); it != by_rank.end()) r.path = it->second->path;
  return out;
}

}  // namespace gpudoctor
