// The GPU edges of one rank: each piece of work after its launch (the traced latency), after the work
// before it on its stream, after the work of another stream it waited for (inferred), and its
// duration (edited).
#include <algorithm>

#include "analysis/replay/graph.h"

namespace gpudoctor::replay_detail {

// GPU work: launch, stream order, cross-stream waits; durations. On a thread of its own for large
// ranks, while this one builds the host calls' edges.
void RankBuilder::gpuEdges() {
  auto add = [&](uint32_t node, int32_t pred, uint8_t kind, int64_t c, uint32_t aux = 0) {
    gpu_edges.push_back({node, pred, c, aux, rank, kind, kAlways});
  };
  ReplayGraphStats& gst = gpu_stats;  // this thread's own figures
  gpu_edges.reserve(3 * g.ops.size());
  std::vector<int32_t> stream_prev(tracks, -1);
  auto waits = event_waits.begin();
  for (uint32_t j = nc; j < g.items(); ++j) {  // from the items' copies: no event read
    const int64_t tj = g.startOf(j);
    for (; waits != event_waits.end() && waits->first == j; ++waits)  // held in the trace: offsets <= 0
      add(g.start(j), static_cast<int32_t>(g.end(waits->second)), kCross,
          std::min<int64_t>(0, tj - g.endOf(waits->second)));
    const uint32_t track = g.trackOf(j);
    int32_t l = launchOf(j);
    int32_t prev = stream_prev[track];
    stream_prev[track] = static_cast<int32_t>(j);
    int64_t a = l >= 0 ? g.startOf(static_cast<uint32_t>(l)) + launch_min : kUnset;
    int64_t b = prev >= 0 ? g.endOf(static_cast<uint32_t>(prev)) : kUnset;
    int64_t explained = std::max(a, b);
    int32_t dep = -1;
    if (explained == kUnset || tj - explained > kUnexplainedWaitNs) {
      const int64_t device = t.tracks[track].pid;
      for (int64_t p = lastEndingBy(tj), n = 0; p >= 0 && n < kCrossStreamScan; --p, ++n) {
        uint32_t c = by_end[static_cast<size_t>(p)];
        const int64_t ce_end = g.endOf(c);
        if (explained != kUnset && ce_end <= explained) break;
        if (tj - ce_end > kCrossStreamScan * kUnexplainedWaitNs && tj - explained < kLongStreamIdleNs) break;
        if (g.trackOf(c) != track && t.tracks[g.trackOf(c)].pid == device && c != j) {
          dep = static_cast<int32_t>(c);
          break;
        }
      }
    }
    int64_t c_val = dep >= 0 ? g.endOf(static_cast<uint32_t>(dep)) : kUnset;
    enum { kNone, kByLaunch, kByStream, kByCross } bind = kNone;
    int64_t best = kUnset;
    if (a != kUnset) best = a, bind = kByLaunch;
    if (b != kUnset && b > best) best = b, bind = kByStream;
    if (c_val != kUnset && c_val > best) best = c_val, bind = kByCross;
    if (l >= 0) {
      int64_t sl = g.startOf(static_cast<uint32_t>(l));
      add(g.start(j), static_cast<int32_t>(g.start(static_cast<uint32_t>(l))), kLaunch,
          bind == kByLaunch ? tj - sl : std::min(launch_min, tj - sl));
    }
    if (prev >= 0)
      add(g.start(j), static_cast<int32_t>(g.end(static_cast<uint32_t>(prev))), kStream,
          bind == kByStream ? tj - b : std::min<int64_t>(0, tj - b));
    if (bind == kByCross) add(g.start(j), static_cast<int32_t>(g.end(static_cast<uint32_t>(dep))), kCross, tj - c_val);
    // A CUDA graph's nodes on several streams: the trace holds neither the graph's edges nor event
    // calls between them, and under the profiler the nodes trickle out of the launch call, so
    // their launch explains their starts. Each node waits for the work on the device's other
    // streams that ended last before it started in the trace (never for work it overlapped); without
    // this, a graph's streams replay side by side (cuDNN's LSTM graphed: 4.5 ms for a 12.6 ms GPU).
    if ((g.item_flags[j] & RankGraph::kInGraph) && bind != kByCross) {
      const int64_t device = t.tracks[track].pid;
      for (int64_t p = lastEndingBy(tj + kEventWaitToleranceNs), n = 0; p >= 0 && n < kCrossStreamScan; --p, ++n) {
        const uint32_t c = by_end[static_cast<size_t>(p)];
        if (b != kUnset && g.endOf(c) <= b) break;  // ends only get earlier: the stream order holds it
        if (g.trackOf(c) == track || c == j || t.tracks[g.trackOf(c)].pid != device) continue;
        add(g.start(j), static_cast<int32_t>(g.end(c)), kCross, std::min<int64_t>(0, tj - g.endOf(c)));
        break;
      }
    }
    if (bind == kNone) add(g.start(j), -1, kRoot, tj);
    (bind == kByLaunch   ? gst.bound_by_launch
     : bind == kByStream ? gst.bound_by_stream
     : bind == kByCross  ? gst.bound_by_cross_stream
                         : gst.unbound)++;
    if (!(g.item_flags[j] & RankGraph::kCollective))  // collectives end at the join
      add(g.end(j), static_cast<int32_t>(g.start(j)), kGpu, 0, j);
  }
}

}  // namespace gpudoctor::replay_detail
