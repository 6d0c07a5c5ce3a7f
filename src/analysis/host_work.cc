#include "analysis/host_work.h"

#include <algorithm>

namespace gpudoctor {

namespace {
bool breaksStretch(const Event& e) {
  return e.kind == EventKind::kHostOp || e.kind == EventKind::kRuntimeCall || e.kind == EventKind::kDriverCall ||
         e.hasRole(kRoleDataLoading) || e.hasRole(kRoleStep);
}
}  // namespace

HostWork hostOwnWork(const RankTrace& t, const std::vector<StepWindow>& windows) {
  HostWork w;
  w.stretches.assign(t.tracks.size(), {});
  if (windows.empty() || !windows.front().annotated) return w;
  // The time any host thread of the rank runs an operator, a call or a fetch (a thread waiting for
  // autograd's backward thread is not working on its own), and the steps' starts.
  std::vector<std::pair<int64_t, int64_t>> busy;
  uint32_t step_track = 0;
  for (const Event& e : t.events) {
    if (!breaksStretch(e) || e.track >= t.tracks.size() || t.tracks[e.track].gpu) continue;
    if (e.hasRole(kRoleStep)) step_track = e.track;
    // A step range marks only its start: the profiler's own work at the step's turn.
    busy.push_back({e.start_ns, e.hasRole(kRoleStep) ? e.start_ns + 1 : e.end_ns()});
  }
  std::vector<std::pair<int64_t, int64_t>> steps;
  for (const StepWindow& s : windows) steps.push_back({s.cpu_begin_ns, s.cpu_end_ns});
  std::vector<double> per_step(windows.size(), 0);
  std::sort(busy.begin(), busy.end());
  int64_t reach = busy.empty() ? 0 : busy.front().second;
  for (size_t k = 1; k < busy.size(); ++k) {
    const int64_t from = reach, to = busy[k].first;
    reach = std::max(reach, busy[k].second);
    if (to - from < kHostWorkMinNs) continue;
    // Inside one step's host range (a stretch across a step's start is the profiler's).
    auto it = std::upper_bound(steps.begin(), steps.end(), std::make_pair(from, INT64_MAX));
    if (it == steps.begin()) continue;
    --it;
    if (to > it->second) continue;
    w.stretches[step_track].push_back({from, to});
    w.total_ns += to - from;
    per_step[static_cast<size_t>(it - steps.begin())] += static_cast<double>(to - from);
  }
  std::sort(per_step.begin(), per_step.end());
  const size_t n = per_step.size();
  w.per_step_ns = n % 2 ? per_step[n / 2] : (per_step[n / 2 - 1] + per_step[n / 2]) / 2;
  return w;
}

}  // namespace gpudoctor
