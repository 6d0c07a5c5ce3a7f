#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sources/record/record_passes.h"

namespace gpudoctor {

namespace rec = recording;

void countLaunches(DecodedRecording& d) {
  std::unordered_map<int64_t, std::pair<int64_t, uint32_t>> first;  // correlation -> (start, name)
  for (const Event& e : d.tr.events) {
    if (!isGpuWork(e.kind) || e.correlation < 0) continue;
    auto [it, fresh] = first.try_emplace(e.correlation, e.start_ns, e.name);
    if (!fresh && e.start_ns < it->second.first) it->second = {e.start_ns, e.name};
  }
  std::unordered_map<uint32_t, uint8_t> kind;  // name -> 1 launch, 2 graph launch, 4 begin capture, 8 end capture
  std::unordered_map<uint32_t, std::vector<std::pair<int64_t, int64_t>>> captures;  // track -> capture spans
  std::unordered_map<uint32_t, int64_t> capture_open;
  std::vector<const Event*> calls;
  for (const Event& e : d.tr.events) {
    if (e.kind != EventKind::kRuntimeCall && e.kind != EventKind::kDriverCall) continue;
    auto [k, fresh] = kind.try_emplace(e.name, 0);
    if (fresh) {
      std::string_view n = d.tr.strings.view(e.name);
      k->second = static_cast<uint8_t>((rec::isLaunchCall(n) ? 1 : 0) | (rec::isGraphLaunchCall(n) ? 2 : 0) |
                                       (n.find("StreamBeginCapture") != std::string_view::npos ? 4 : 0) |
                                       (n.find("StreamEndCapture") != std::string_view::npos ? 8 : 0));
    }
    if (k->second & 4) capture_open[e.track] = e.start_ns;
    if ((k->second & 8) && capture_open.count(e.track)) {
      captures[e.track].push_back({capture_open[e.track], e.end_ns()});
      capture_open.erase(e.track);
    }
    if (k->second & 3) calls.push_back(&e);
  }
  auto captured = [&](const Event& e) {
    auto it = captures.find(e.track);
    if (it == captures.end()) return false;
    for (auto& [b, x] : it->second)
      if (e.start_ns >= b && e.end_ns() <= x) return true;
    return false;
  };
  std::unordered_map<uint32_t, size_t> per_track;
  for (const Event* e : calls) {
    ++d.facts.launch_calls;
    if (kind[e->name] & 2) ++d.facts.graph_launches;
    auto it = first.find(e->correlation);
    if (it == first.end()) {
      if (captured(*e))
        ++d.facts.captured_launches;
      else
        ++d.facts.launches_without_gpu_work;
      continue;
    }
    d.launches.push_back({e->start_ns, e->end_ns(), it->second.second});
    ++per_track[e->track];
  }
  size_t most = 0;
  for (auto& [track, n] : per_track)
    if (n > most || (n == most && track < d.main_track)) {
      most = n;
      d.main_track = track;
    }
  std::sort(d.launches.begin(), d.launches.end(),
            [](const LaunchMark& a, const LaunchMark& b) { return a.start_ns < b.start_ns; });
}

}  // namespace gpudoctor
