#include "analysis/replay/steps.h"

#include <algorithm>

namespace gpudoctor::replay_detail {

HostPoint mapHost(const RankGraph& g, const std::vector<int64_t>& value, uint32_t track, int64_t t,
                  const ReplayEdits& ed) {
  if (track >= g.calls_on_track.size() || g.calls_on_track[track].empty()) return {t, -1, 0};
  const auto& list = g.calls_on_track[track];
  auto pos = std::upper_bound(list.begin(), list.end(), t, [&](int64_t v, uint32_t c) { return v < g.startOf(c); });
  if (pos == list.begin()) {  // before the thread's first call: from its first host event, as that call
    const std::vector<int64_t>& hs = g.host_starts[track];
    if (!hs.empty() && hs.front() < t) return {hs.front() + g.hostSpan(track, hs.front(), t, ed), -1, 0};
    return {t, -1, 0};
  }
  uint32_t c = *(pos - 1);
  const Event& e = g.ev(c);
  if (t >= e.end_ns()) {
    int64_t span = g.hostSpan(track, e.end_ns(), t, ed);
    return {value[g.end(c)] + span, g.end(c), span};
  }
  int64_t in = value[g.start(c)] + (t - e.start_ns);
  if (in < value[g.end(c)]) return {in, g.start(c), t - e.start_ns};
  return {value[g.end(c)], g.end(c), 0};
}

std::vector<GpuStep> gpuSteps(const RankGraph& g, const std::vector<int64_t>& value,
                              std::span<const StepWindow> windows) {
  const size_t n = windows.size();
  std::vector<GpuStep> out(n);
  if (n == 0) return out;
  // Launch ranges, sorted by begin (the windows are).
  std::vector<std::pair<int64_t, int64_t>> range(n);
  for (size_t k = 0; k < n; ++k) {
    const StepWindow& w = windows[k];
    if (!w.annotated)
      range[k] = {INT64_MIN, INT64_MAX};
    else if (k + 1 < n && windows[k + 1].begin_ns == w.end_ns)
      range[k] = {w.cpu_begin_ns, windows[k + 1].cpu_begin_ns};
    else
      range[k] = {w.cpu_begin_ns, w.cpu_end_ns};
  }
  const size_t tracks = g.calls_on_track.size();
  uint32_t max_track = 0;
  for (uint32_t j = 0; j < g.ops.size(); ++j)
    max_track = std::max(max_track, g.trackOf(static_cast<uint32_t>(g.calls.size()) + j));
  const size_t streams = std::max<size_t>(tracks, max_track + 1);
  // busy[side][window][stream][part]
  std::vector<int64_t> busy(2 * n * streams * 3, 0), queued(2 * n * streams, 0);
  auto at = [&](int side, size_t k, size_t stream, size_t part) -> int64_t& {
    return busy[((static_cast<size_t>(side) * n + k) * streams + stream) * 3 + part];
  };
  std::vector<int64_t> last_end(2 * streams, kUnset);  // per side and stream: the previous work's end
  for (uint32_t j = 0; j < g.ops.size(); ++j) {
    const uint32_t item = static_cast<uint32_t>(g.calls.size()) + j;
    const int32_t l = g.launch_item[item];
    if (l < 0) continue;
    const int64_t launched = g.startOf(static_cast<uint32_t>(l));
    const size_t stream = g.trackOf(item);
    const int64_t spans[2][2] = {{g.startOf(item), g.endOf(item)}, {value[g.start(item)], value[g.end(item)]}};
    const int64_t launch_at[2] = {launched, value[g.start(static_cast<uint32_t>(l))]};
    int64_t gaps[2] = {0, 0};  // the GPU's own part of the gap before this work, per side
    for (int side = 0; side < 2; ++side) {
      int64_t& prev = last_end[static_cast<size_t>(side) * streams + stream];
      if (spans[side][0] == kUnset || spans[side][1] == kUnset) continue;
      if (prev != kUnset && launch_at[side] != kUnset)
        gaps[side] = std::max<int64_t>(0, spans[side][0] - std::max(prev, launch_at[side]));
      prev = std::max(prev, spans[side][1]);
    }
    auto it = std::upper_bound(range.begin(), range.end(), launched,
                               [](int64_t v, const std::pair<int64_t, int64_t>& r) { return v < r.first; });
    if (it == range.begin()) continue;
    const size_t k = static_cast<size_t>(it - range.begin()) - 1;
    if (launched >= range[k].second) continue;
    const size_t part = static_cast<size_t>(gpuCategory(g.ev(item))) == static_cast<size_t>(PathCategory::kCompute) ? 0
                        : gpuCategory(g.ev(item)) == PathCategory::kCommunication                                   ? 1
                                                                                                                    : 2;
    for (int side = 0; side < 2; ++side) {
      if (spans[side][0] == kUnset || spans[side][1] == kUnset) continue;
      // A collective's time holds its wait for the other ranks: not work a stream must do.
      if (part != 1) {
        at(side, k, stream, part) += spans[side][1] - spans[side][0];
        queued[(static_cast<size_t>(side) * n + k) * streams + stream] += spans[side][1] - spans[side][0] + gaps[side];
      }
      out[k].side[side].end_ns = std::max(out[k].side[side].end_ns, spans[side][1]);
    }
  }
  for (int side = 0; side < 2; ++side)
    for (size_t k = 0; k < n; ++k)
      for (size_t st = 0; st < streams; ++st) {
        out[k].side[side].queued_ns =
            std::max(out[k].side[side].queued_ns, queued[(static_cast<size_t>(side) * n + k) * streams + st]);
        const int64_t sum = at(side, k, st, 0) + at(side, k, st, 1) + at(side, k, st, 2);
        if (sum > out[k].side[side].busy_ns) {
          out[k].side[side].busy_ns = sum;
          for (size_t p = 0; p < 3; ++p) out[k].side[side].busy_parts[p] = at(side, k, st, p);
        }
      }
  return out;
}

// The host sets the step's make-up where its period is at least this share of the GPU's.
constexpr double kHostSetsShare = 0.9;

void finishSteps(std::vector<StepRow>& rows, const ReplayEdits& ed, Replay& out) {
  if (rows.empty()) return;
  std::vector<StepTiming> traced, replayed;
  for (StepRow& r : rows) {
    for (StepTiming* t : {&r.traced, &r.replayed}) {
      t->host_ns /= r.ranks;
      t->busy_ns /= r.ranks;
      for (double& p : t->busy_parts) p /= r.ranks;
      if (t->gpu_period_ns >= 0) t->gpu_period_ns /= r.ranks;
    }
    for (double& p : r.path) p /= r.ranks;
    traced.push_back(r.traced);
    replayed.push_back(r.replayed);
  }
  out.traced = steadyState(traced);
  out.replayed = steadyState(replayed, static_cast<double>(ed.loader_period_ns));
  out.traced_step_ns = out.traced.period_ns;
  out.replayed_step_ns = out.replayed.period_ns;
  out.path_ns = {};
  const SteadyState& st = out.replayed;
  const double gpu = std::max(st.gpu_period_ns, st.busy_ns);
  if (st.host_ns >= kHostSetsShare * gpu && (st.bound != StepBound::kLoader || st.host_ns >= gpu)) {
    // The host's critical path (the middle steps by host time), stretched to the period where the
    // GPU's is a little longer (a few steps' jitter, not a backlog).
    std::vector<size_t> order(rows.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return rows[a].replayed.host_ns < rows[b].replayed.host_ns; });
    const size_t n = order.size(), r1 = order[(n - 1) / 2], r2 = order[n / 2];
    double sum = 0;
    for (size_t c = 0; c < kPathCategoryCount; ++c) sum += out.path_ns[c] = (rows[r1].path[c] + rows[r2].path[c]) / 2;
    const double to = st.bound == StepBound::kLoader ? std::max(st.host_ns, gpu) : st.period_ns;
    if (sum > 0 && to > sum)
      for (double& p : out.path_ns) p *= to / sum;
    if (out.replayed.bound == StepBound::kLoader) {  // the host waits for the loader's next batch: input
      double on_path = 0;
      for (double p : out.path_ns) on_path += p;
      out.path_ns[static_cast<size_t>(PathCategory::kInput)] += std::max(0.0, out.replayed.period_ns - on_path);
    }
  } else if (out.replayed.bound == StepBound::kLoader) {
    out.path_ns[static_cast<size_t>(PathCategory::kInput)] = out.replayed.period_ns;
  } else {
    const auto& p = out.replayed.busy_parts;
    out.path_ns[static_cast<size_t>(PathCategory::kCompute)] = p[0];
    out.path_ns[static_cast<size_t>(PathCategory::kCommunication)] = p[1];
    out.path_ns[static_cast<size_t>(PathCategory::kCopies)] = p[2];
    out.path_ns[static_cast<size_t>(PathCategory::kOtherIdle)] =
        std::max(0.0, out.replayed.period_ns - out.replayed.busy_ns);
  }
  out.leading = PathCategory::kCompute;
  for (size_t c = 0; c < kPathCategoryCount; ++c)
    if (out.path_ns[c] > out.path_ns[static_cast<size_t>(out.leading)]) out.leading = static_cast<PathCategory>(c);
}

}  // namespace gpudoctor::replay_detail
