#include "analysis/ranks.h"

#include <algorithm>

#include <fmt/format.h>

namespace gpudoctor {

StragglerReport findStraggler(const std::vector<RankWindows>& ranks, const std::vector<int>& rank_ids, double min_share,
                              double min_wait_fraction) {
  StragglerReport r;
  if (ranks.size() < 2) {
    r.note = "one rank: nothing to compare";
    return r;
  }
  std::vector<std::vector<int64_t>> durs(ranks.size());
  for (size_t k = 0; k < ranks.size(); ++k) {
    const TraceIndex& idx = *ranks[k].idx;
    const auto& ev = idx.trace->events;
    // Only collectives launched inside the selected steps: GPU work left over from before the
    // profiler started has no launch record and would shift the matching.
    for (const auto& w : *ranks[k].windows) {
      std::vector<std::pair<int64_t, int64_t>> in_step;  // (start, duration)
      auto it = idx.firstStartingAt(idx.launches, w.begin_ns);
      for (; it != idx.launches.end() && ev[*it].start_ns < w.end_ns; ++it) {
        uint32_t wk = idx.work_of.find(ev[*it].correlation);
        if (wk == IdMap::kNone) continue;
        const Event& g = ev[wk];
        if (g.kind == EventKind::kKernel && isCommunication(idx.class_of_event[wk]))
          in_step.push_back({g.start_ns, g.dur_ns});
      }
      std::sort(in_step.begin(), in_step.end());
      for (auto& p : in_step) durs[k].push_back(p.second);
    }
  }
  size_t n = durs[0].size();
  for (size_t k = 1; k < durs.size(); ++k) {
    if (durs[k].size() != n) {
      r.note = fmt::format(
          "ranks {} and {} recorded {} and {} NCCL kernels in the selected steps; "
          "collectives cannot be matched",
          rank_ids[0], rank_ids[k], n, durs[k].size());
      return r;
    }
  }
  if (n == 0) {
    r.note = "no NCCL kernels in the selected steps";
    return r;
  }
  r.matched = true;
  r.collectives = static_cast<int64_t>(n);
  r.ranks.resize(ranks.size());
  for (size_t k = 0; k < ranks.size(); ++k) r.ranks[k].rank = rank_ids[k];
  // A rank arrives last where it has the shortest kernel and another rank waited for it: where all
  // durations tie (copies of one trace, a collective nobody waited at) nobody arrived last.
  int64_t waited_at = 0;
  for (size_t i = 0; i < n; ++i) {
    size_t argmin = 0;
    for (size_t k = 1; k < durs.size(); ++k)
      if (durs[k][i] < durs[argmin][i]) argmin = k;
    int64_t mn = durs[argmin][i], waited = 0;
    for (size_t k = 0; k < durs.size(); ++k) {
      r.ranks[k].nccl_ns += durs[k][i];
      r.ranks[k].wait_ns += durs[k][i] - mn;
      waited += durs[k][i] - mn;
    }
    if (waited > 0) ++r.ranks[argmin].last_arrivals, ++waited_at;
  }
  size_t best = 0;
  for (size_t k = 1; k < r.ranks.size(); ++k)
    if (r.ranks[k].last_arrivals > r.ranks[best].last_arrivals) best = k;
  double share = waited_at ? static_cast<double>(r.ranks[best].last_arrivals) / static_cast<double>(waited_at) : 0;
  int64_t others_wait = 0, others_nccl = 0;
  for (size_t k = 0; k < r.ranks.size(); ++k)
    if (k != best) {
      others_wait += r.ranks[k].wait_ns;
      others_nccl += r.ranks[k].nccl_ns;
    }
  auto others = static_cast<int64_t>(r.ranks.size() - 1);
  r.others_wait_ns = others_wait / others;
  double frac = others_nccl ? static_cast<double>(others_wait) / static_cast<double>(others_nccl) : 0;
  r.straggler_share = share;
  if (share >= min_share && frac >= min_wait_fraction) {
    r.straggler = r.ranks[best].rank;
    r.note = fmt::format(
        "rank {} arrives last at {:.0f}% of the {} collectives where a rank waited ({} matched); the "
        "other ranks wait {:.0f}% of their NCCL time for it",
        r.straggler, 100 * share, waited_at, n, 100 * frac);
  } else {
    r.note = fmt::format(
        "no consistent straggler (the most frequent last arrival, rank {}, comes last at {:.0f}% "
        "of the {} collectives where a rank waited ({} matched); waiting is {:.0f}% of the others' "
        "NCCL time)",
        r.ranks[best].rank, 100 * share, waited_at, n, 100 * frac);
  }
  return r;
}

}  // namespace gpudoctor
