#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "sources/record/record_passes.h"

namespace gpudoctor {

void dropNestedDriverCalls(DecodedRecording& d) {
  std::unordered_map<uint32_t, std::vector<uint32_t>> by_track;
  for (uint32_t i = 0; i < d.tr.events.size(); ++i) {
    EventKind k = d.tr.events[i].kind;
    if (k == EventKind::kRuntimeCall || k == EventKind::kDriverCall) by_track[d.tr.events[i].track].push_back(i);
  }
  std::unordered_map<int64_t, int64_t> remap;
  std::vector<bool> drop(d.tr.events.size(), false);
  for (auto& [track, v] : by_track) {
    std::sort(v.begin(), v.end(), [&](uint32_t a, uint32_t b) {
      const Event &x = d.tr.events[a], &y = d.tr.events[b];
      return x.start_ns != y.start_ns ? x.start_ns < y.start_ns : x.dur_ns > y.dur_ns;
    });
    int64_t open_end = INT64_MIN, open_corr = -1;
    for (uint32_t i : v) {
      const Event& e = d.tr.events[i];
      if (e.kind == EventKind::kRuntimeCall) {
        if (e.end_ns() > open_end) {
          open_end = e.end_ns();
          open_corr = e.correlation;
        }
      } else if (e.end_ns() <= open_end) {
        drop[i] = true;
        remap[e.correlation] = open_corr;
      }
    }
  }
  if (remap.empty()) return;
  std::vector<Event> kept;
  kept.reserve(d.tr.events.size());
  for (uint32_t i = 0; i < d.tr.events.size(); ++i) {
    if (drop[i]) {
      ++d.facts.nested_driver_calls;
      continue;
    }
    Event e = d.tr.events[i];
    if (isGpuWork(e.kind)) {
      auto it = remap.find(e.correlation);
      if (it != remap.end()) e.correlation = it->second;
    }
    kept.push_back(e);
  }
  d.tr.events = std::move(kept);
}

void unlinkSharedCorrelations(DecodedRecording& d) {
  std::unordered_map<int64_t, uint32_t> calls;
  for (const Event& e : d.tr.events)
    if ((e.kind == EventKind::kRuntimeCall || e.kind == EventKind::kDriverCall) && e.correlation >= 0)
      ++calls[e.correlation];
  std::unordered_set<int64_t> shared;
  for (auto& [c, n] : calls)
    if (n > 1) shared.insert(c);
  if (shared.empty()) return;
  std::vector<std::pair<uint64_t, uint64_t>> per_window(d.windows.size());  // (calls, unlinked calls)
  for (Event& e : d.tr.events) {
    if (e.correlation < 0 || !shared.count(e.correlation)) continue;
    e.correlation = -1;
    if (e.kind == EventKind::kRuntimeCall || e.kind == EventKind::kDriverCall) ++d.facts.shared_correlation_calls;
  }
  for (const Event& e : d.tr.events) {
    if (e.kind != EventKind::kRuntimeCall && e.kind != EventKind::kDriverCall) continue;
    size_t w = windowOf(d, e.start_ns);
    if (w == SIZE_MAX) continue;
    ++per_window[w].first;
    per_window[w].second += e.correlation < 0;
  }
  for (size_t w = 0; w < per_window.size(); ++w)
    if (per_window[w].second * 100 > per_window[w].first) d.bad_windows.insert(w);
}

size_t windowOf(const DecodedRecording& d, int64_t t) {
  auto it = std::upper_bound(d.windows.begin(), d.windows.end(), std::make_pair(t, INT64_MAX));
  if (it == d.windows.begin()) return SIZE_MAX;
  --it;
  return t <= it->second ? static_cast<size_t>(it - d.windows.begin()) : SIZE_MAX;
}

bool badWindow(const DecodedRecording& d, int64_t t) {
  return !d.bad_windows.empty() && d.bad_windows.count(windowOf(d, t)) != 0;
}

}  // namespace gpudoctor
