#include "analysis/replay.h"

#include "analysis/breakdown.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <map>
#include <thread>

#include <fmt/format.h>

namespace gpudoctor {
namespace {

constexpr int64_t kUnset = std::numeric_limits<int64_t>::min();
// GPU and host timestamps come from different clocks: a sync call may appear to return up to this
// long before the work it waited for ends.
constexpr int64_t kClockToleranceNs = 2000;
constexpr int64_t kCopyEndToleranceNs = 50000;
// A cross-stream wait (cudaStreamWaitEvent) lets the waiting stream run within a few microseconds
// of the producer's end; a start later than its launch and stream allow by more than this is
// looked for among the other streams' ends.
constexpr int64_t kUnexplainedWaitNs = 1000;
constexpr int kCrossStreamScan = 64;  // ends examined per unexplained wait
// A host thread idle this long between two calls, with no host event recorded meanwhile, is taken
// to wait for the call of another thread that ended last before it resumed.
constexpr int64_t kHandoffIdleNs = 20000;

// value[node] = max over edges (value[pred] + off); pred -1 is the constant off.
struct Edge {
  uint32_t node;
  int32_t pred;
  int64_t off;
};

struct RankGraph {
  const RankAnalysis* ra = nullptr;
  uint32_t base = 0;                  // node id of item 0's start
  std::vector<uint32_t> calls, ops;   // event index per item: calls are items [0, calls), ops follow
  std::vector<int32_t> item_of;       // event -> item, -1
  // Per track (index into RankTrace::tracks): a rank has tens of tracks, so plain vectors.
  std::vector<std::vector<uint32_t>> calls_on_track;  // call items in start order
  std::vector<std::vector<int64_t>> host_starts;      // recorded host events' starts per thread
  std::vector<std::vector<int64_t>> host_ends;        // ... and their ends, in the same order
  int64_t host_event_overhead_ns = 0;
  bool free_host = false;   // free_launches: host gaps cost nothing but the loader's time
  bool loader_off = false;  // loader_off_thread: the loader's time is gone
  std::vector<std::vector<std::pair<int64_t, int64_t>>> loader;  // in-process loader ranges per thread
  std::vector<std::vector<int64_t>> step_starts;                  // step ranges' starts per thread
  // The part of [from, to) inside the thread's loader ranges.
  int64_t loaderOverlap(uint32_t track, int64_t from, int64_t to) const {
    int64_t in = 0;
    for (const auto& [b, e] : loader[track]) in += std::max<int64_t>(0, std::min(e, to) - std::max(b, from));
    return in;
  }
  // Host time in [from, to) on a thread less the profiler's cost of the events that start in it
  // and less the ranges an edit removed.
  int64_t hostSpan(uint32_t track, int64_t from, int64_t to) const {
    if (to <= from) return to - from;
    int64_t span = to - from;
    if (free_host || loader_off) {
      int64_t in = loaderOverlap(track, from, to);
      span = (free_host ? 0 : span - in) + (loader_off ? 0 : in);
    }
    if (host_event_overhead_ns == 0) return span;
    const auto& v = host_starts[track];
    auto n = std::lower_bound(v.begin(), v.end(), to) - std::lower_bound(v.begin(), v.end(), from);
    return std::max<int64_t>(0, span - n * host_event_overhead_ns);
  }
  uint32_t items() const { return static_cast<uint32_t>(calls.size() + ops.size()); }
  uint32_t start(uint32_t item) const { return base + 2 * item; }
  uint32_t end(uint32_t item) const { return base + 2 * item + 1; }
  std::vector<int64_t> item_start, item_end;  // copies of the items' times (the events are 64 B each: far apart)
  std::vector<uint32_t> item_track;
  std::vector<int32_t> launch_item;  // per GPU-work item: its launch call's item, -1
  int64_t startOf(uint32_t item) const { return item_start[item]; }
  int64_t endOf(uint32_t item) const { return item_end[item]; }
  uint32_t trackOf(uint32_t item) const { return item_track[item]; }
  const Event& ev(uint32_t item) const {
    return ra->trace->events[item < calls.size() ? calls[item] : ops[item - calls.size()]];
  }
};

double scaleOf(const RankAnalysis& r, uint32_t event, const ReplayEdits& ed) {
  const Event& e = r.trace->events[event];
  if (e.kind == EventKind::kMemcpy) {
    if (ed.pageable_htod_scale == 1.0) return ed.memcpy_scale;
    std::string_view name = r.trace->strings.view(e.name);
    bool pageable_htod = copyDirOf(name) == CopyDir::kHtoD && isPageableCopy(name);
    return ed.memcpy_scale * (pageable_htod ? ed.pageable_htod_scale : 1.0);
  }
  if (e.kind == EventKind::kMemset) return ed.memset_scale;
  return ed.kernel_scale[static_cast<size_t>(r.index.class_of_event[event])];
}

int64_t scaled(int64_t ns, double s) { return s == 1.0 ? ns : static_cast<int64_t>(std::llround(ns * s)); }

// Items, host order, launches, stream order, cross-stream waits and sync waits of one rank.
void buildRank(RankGraph& g, const ReplayEdits& ed, std::vector<Edge>& edges, ReplayGraphStats& st) {
  const RankTrace& t = *g.ra->trace;
  const TraceIndex& idx = g.ra->index;
  g.item_of.assign(t.events.size(), -1);
  g.host_event_overhead_ns = ed.host_event_overhead_ns;
  g.free_host = ed.free_launches;
  g.loader_off = ed.loader_off_thread;
  const size_t tracks = t.tracks.size();
  g.calls_on_track.assign(tracks, {});
  g.host_starts.assign(tracks, {});
  g.host_ends.assign(tracks, {});
  g.loader.assign(tracks, {});
  g.step_starts.assign(tracks, {});
  for (const Event& e : t.events) {  // events are in start order, so each list is sorted
    if (e.kind == EventKind::kHostOp || e.kind == EventKind::kRange || e.kind == EventKind::kHostFunction) {
      g.host_starts[e.track].push_back(e.start_ns);
      g.host_ends[e.track].push_back(e.end_ns());
    }
    if (e.hasRole(kRoleStep)) g.step_starts[e.track].push_back(e.start_ns);
    if (e.hasRole(kRoleDataLoading) && e.hasRole(kRoleLoaderInProcess)) {
      auto& v = g.loader[e.track];
      if (!v.empty() && e.start_ns < v.back().second) v.back().second = std::max(v.back().second, e.end_ns());
      else v.push_back({e.start_ns, e.end_ns()});
    }
  }
  // Host calls, top level per thread: a call inside another (a driver call under a runtime call)
  // is part of it.
  std::vector<int64_t> track_end(tracks, INT64_MIN);
  std::vector<uint32_t> track_last(tracks, 0);
  for (uint32_t i = 0; i < t.events.size(); ++i) {
    const Event& e = t.events[i];
    if (e.kind != EventKind::kRuntimeCall && e.kind != EventKind::kDriverCall) continue;
    if (e.start_ns < track_end[e.track]) {
      g.item_of[i] = static_cast<int32_t>(track_last[e.track]);
      continue;
    }
    uint32_t item = static_cast<uint32_t>(g.calls.size());
    g.calls.push_back(i);
    g.item_of[i] = static_cast<int32_t>(item);
    g.calls_on_track[e.track].push_back(item);
    track_end[e.track] = e.end_ns();
    track_last[e.track] = item;
  }
  for (uint32_t w : idx.gpu_work) {
    g.item_of[w] = static_cast<int32_t>(g.calls.size() + g.ops.size());
    g.ops.push_back(w);
  }
  g.item_start.reserve(g.items());
  g.item_end.reserve(g.items());
  g.item_track.reserve(g.items());
  for (uint32_t list : {0u, 1u})
    for (uint32_t ev : list == 0 ? g.calls : g.ops) {
      const Event& e = t.events[ev];
      g.item_start.push_back(e.start_ns);
      g.item_end.push_back(e.end_ns());
      g.item_track.push_back(e.track);
    }
  st.calls += static_cast<int64_t>(g.calls.size());
  st.gpu_work += static_cast<int64_t>(g.ops.size());
  const uint32_t nc = static_cast<uint32_t>(g.calls.size());
  // The launch call of each piece of GPU work (-1: none recorded), looked up once.
  g.launch_item.assign(g.items(), -1);
  for (uint32_t j = nc; j < g.items(); ++j) {
    const Event& e = g.ev(j);
    uint32_t l = e.correlation < 0 ? IdMap::kNone : idx.launch_of.find(e.correlation);
    if (l != IdMap::kNone) g.launch_item[j] = g.item_of[l];
  }
  auto launchOf = [&](uint32_t op_item) { return g.launch_item[op_item]; };
  // The smallest usual launch-to-start delay (10th percentile), from work launched onto an idle
  // stream (the previous work on it ended before the launch): how soon work can follow its launch.
  std::vector<int64_t> delays;
  {
    std::vector<int64_t> stream_end(tracks, INT64_MIN);
    for (uint32_t j = nc; j < g.items(); ++j) {
      const uint32_t tr = g.trackOf(j);
      int32_t l = launchOf(j);
      if (l >= 0) {
        int64_t sl = g.startOf(static_cast<uint32_t>(l));
        if (stream_end[tr] <= sl) delays.push_back(g.startOf(j) - sl);
      }
      stream_end[tr] = std::max(stream_end[tr], g.endOf(j));
    }
  }
  int64_t launch_min = 0;
  if (!delays.empty()) {
    auto k = delays.begin() + static_cast<std::ptrdiff_t>(delays.size() / 10);
    std::nth_element(delays.begin(), k, delays.end());
    launch_min = std::max<int64_t>(0, *k);
  }
  // GPU work by end time, for sync waits and cross-stream waits.
  std::vector<uint32_t> by_end(g.ops.size());
  for (uint32_t k = 0; k < by_end.size(); ++k) by_end[k] = nc + k;
  std::sort(by_end.begin(), by_end.end(), [&](uint32_t a, uint32_t b) { return g.endOf(a) < g.endOf(b); });
  auto lastEndingBy = [&](int64_t t_ns) -> int64_t {  // position in by_end of the last op ending <= t_ns, or -1
    auto it = std::upper_bound(by_end.begin(), by_end.end(), t_ns,
                               [&](int64_t v, uint32_t item) { return v < g.endOf(item); });
    return static_cast<int64_t>(it - by_end.begin()) - 1;
  };
  // GPU work: launch, stream order, cross-stream waits; durations (edited).
  std::vector<int32_t> last_own_op(nc, -1);
  std::vector<int32_t> stream_prev(tracks, -1);
  for (uint32_t j = nc; j < g.items(); ++j) {
    const Event& e = g.ev(j);
    const int64_t tj = e.start_ns;
    int32_t l = launchOf(j);
    if (l >= 0 && (last_own_op[l] < 0 || g.endOf(static_cast<uint32_t>(last_own_op[l])) < e.end_ns()))
      last_own_op[l] = static_cast<int32_t>(j);
    int32_t prev = stream_prev[e.track];
    stream_prev[e.track] = static_cast<int32_t>(j);
    int64_t a = l >= 0 ? g.startOf(static_cast<uint32_t>(l)) + launch_min : kUnset;
    int64_t b = prev >= 0 ? g.endOf(static_cast<uint32_t>(prev)) : kUnset;
    int64_t explained = std::max(a, b);
    int32_t dep = -1;
    if (explained == kUnset || tj - explained > kUnexplainedWaitNs) {
      const int64_t device = t.tracks[e.track].pid;
      for (int64_t p = lastEndingBy(tj), n = 0; p >= 0 && n < kCrossStreamScan; --p, ++n) {
        uint32_t c = by_end[static_cast<size_t>(p)];
        const Event& ce = g.ev(c);
        if (explained != kUnset && ce.end_ns() <= explained) break;
        if (tj - ce.end_ns() > kCrossStreamScan * kUnexplainedWaitNs) break;
        if (ce.track != e.track && t.tracks[ce.track].pid == device && c != j) {
          dep = static_cast<int32_t>(c);
          break;
        }
      }
    }
    int64_t c_val = dep >= 0 ? g.endOf(static_cast<uint32_t>(dep)) : kUnset;
    enum { kNone, kLaunch, kStream, kCross } bind = kNone;
    int64_t best = kUnset;
    if (a != kUnset) best = a, bind = kLaunch;
    if (b != kUnset && b > best) best = b, bind = kStream;
    if (c_val != kUnset && c_val > best) best = c_val, bind = kCross;
    if (l >= 0) {
      int64_t sl = g.startOf(static_cast<uint32_t>(l));
      edges.push_back({g.start(j), static_cast<int32_t>(g.start(static_cast<uint32_t>(l))),
                       bind == kLaunch ? tj - sl : std::min(launch_min, tj - sl)});
    }
    if (prev >= 0)
      edges.push_back({g.start(j), static_cast<int32_t>(g.end(static_cast<uint32_t>(prev))),
                       bind == kStream ? tj - b : std::min<int64_t>(0, tj - b)});
    if (bind == kCross) edges.push_back({g.start(j), static_cast<int32_t>(g.end(static_cast<uint32_t>(dep))), tj - c_val});
    if (bind == kNone) edges.push_back({g.start(j), -1, tj});
    (bind == kLaunch ? st.bound_by_launch : bind == kStream ? st.bound_by_stream
                                        : bind == kCross    ? st.bound_by_cross_stream
                                                            : st.unbound)++;
    if (!e.collective)  // collectives end at the join (replayRun)
      edges.push_back({g.end(j), static_cast<int32_t>(g.start(j)), scaled(e.dur_ns, scaleOf(*g.ra, g.ops[j - nc], ed))});
  }
  // Calls by end, for hand-offs between threads.
  std::vector<uint32_t> calls_by_end(nc);
  for (uint32_t k = 0; k < nc; ++k) calls_by_end[k] = k;
  std::sort(calls_by_end.begin(), calls_by_end.end(),
            [&](uint32_t a, uint32_t b) { return g.endOf(a) < g.endOf(b); });
  // The call of another thread than `track` that ended last at or before `by`, not before
  // `not_before`; -1 when none.
  auto otherThreadCallEndedBy = [&](uint32_t track, int64_t by, int64_t not_before) -> int32_t {
    auto it = std::upper_bound(calls_by_end.begin(), calls_by_end.end(), by,
                               [&](int64_t v, uint32_t x) { return v < g.endOf(x); });
    for (int n = 0; it != calls_by_end.begin() && n < kCrossStreamScan; ++n) {
      uint32_t o = *--it;
      if (g.endOf(o) < not_before) break;
      if (g.trackOf(o) != track) return static_cast<int32_t>(o);
    }
    return -1;
  };
  // The GPU work a call waited for, or -1: its own copy when the copy finished inside the call
  // (pageable memory, cudaMemcpy; a kernel finishing inside its launch call did not hold the call
  // up), and for a synchronizing call the work that ended last before it returned.
  auto awaitedBy = [&](uint32_t c) -> int32_t {
    const Event& e = g.ev(c);
    int32_t await = -1;
    if (int32_t own = last_own_op[c]; own >= 0 && g.ev(static_cast<uint32_t>(own)).kind != EventKind::kKernel) {
      const Event& oe = g.ev(static_cast<uint32_t>(own));
      // GPU copy ends are seen up to tens of microseconds after the call returns (pageable copies
      // on H200: 17 us); a call as long as half its copy that returns about when it ends waited.
      if (oe.end_ns() > e.start_ns && oe.end_ns() <= e.end_ns() + kCopyEndToleranceNs && 2 * e.dur_ns >= oe.dur_ns)
        await = own;
    }
    if (e.hasRole(kRoleSyncCall)) {
      int64_t p = lastEndingBy(e.end_ns() + kClockToleranceNs);
      if (p >= 0) {
        uint32_t k2 = by_end[static_cast<size_t>(p)];
        if (await < 0 || g.endOf(k2) > g.endOf(static_cast<uint32_t>(await))) await = static_cast<int32_t>(k2);
      }
    }
    return await;
  };
  // Host calls: thread order with the gaps kept; a call that waited for GPU work ends after it.
  for (uint32_t track = 0; track < tracks; ++track) {
    const std::vector<uint32_t>& list = g.calls_on_track[track];
    const std::vector<int64_t>* starts = nullptr;
    if (!g.host_starts[track].empty()) starts = &g.host_starts[track];
    const std::vector<int64_t>* steps = nullptr;
    if (!g.step_starts[track].empty()) steps = &g.step_starts[track];
    for (size_t k = 0; k < list.size(); ++k) {
      uint32_t c = list[k];
      const Event& e = g.ev(c);
      // drop_sync_waits keeps the wait of the call that closes a step (the training loop's own
      // synchronize, or the profiler step's): the edit removes the syncs inside the step.
      bool keep_waits = !ed.drop_sync_waits;
      if (!keep_waits && steps) {
        auto next_step = std::upper_bound(steps->begin(), steps->end(), e.start_ns);
        int64_t boundary = next_step == steps->end() ? INT64_MAX : *next_step;
        keep_waits = k + 1 == list.size() || g.startOf(list[k + 1]) >= boundary;
      }
      if (k == 0) {
        // A thread's first call follows the last call another thread ended before it (a thread
        // started inside the trace, autograd's backward thread), else keeps its traced time.
        int32_t from = otherThreadCallEndedBy(track, e.start_ns, INT64_MIN);
        if (from < 0) {
          edges.push_back({g.start(c), -1, e.start_ns});
        } else {
          edges.push_back({g.start(c), static_cast<int32_t>(g.end(static_cast<uint32_t>(from))),
                           g.hostSpan(track, g.endOf(static_cast<uint32_t>(from)), e.start_ns)});
          ++st.thread_handoffs;
        }
      } else {
        const Event& p = g.ev(list[k - 1]);
        // A thread that idles (no host event recorded) until another thread's call ends was waiting
        // for that thread (autograd's backward thread, the main thread after backward): the longest
        // stretch of the gap that no host event covers, and the call of another thread that ended
        // last within it.
        int64_t hole_begin = p.end_ns(), wake = e.start_ns, hole = 0;
        if (starts) {
          const std::vector<int64_t>& ends = g.host_ends[track];
          size_t i = static_cast<size_t>(std::lower_bound(starts->begin(), starts->end(), p.end_ns()) - starts->begin());
          int64_t covered = p.end_ns();
          for (; i < starts->size() && (*starts)[i] < e.start_ns; ++i) {
            if ((*starts)[i] - covered > hole) hole = (*starts)[i] - covered, hole_begin = covered, wake = (*starts)[i];
            covered = std::max(covered, ends[i]);
          }
          if (e.start_ns - covered > hole) hole = e.start_ns - covered, hole_begin = covered, wake = e.start_ns;
        } else {
          hole = e.start_ns - p.end_ns();
        }
        int32_t from = hole > kHandoffIdleNs ? otherThreadCallEndedBy(track, wake, hole_begin) : -1;
        if (from < 0) {
          edges.push_back({g.start(c), static_cast<int32_t>(g.end(list[k - 1])), g.hostSpan(track, p.end_ns(), e.start_ns)});
        } else {
          const Event& o = g.ev(static_cast<uint32_t>(from));
          edges.push_back({g.start(c), static_cast<int32_t>(g.end(list[k - 1])),
                           g.hostSpan(track, p.end_ns(), hole_begin) + g.hostSpan(track, wake, e.start_ns)});
          edges.push_back({g.start(c), static_cast<int32_t>(g.end(static_cast<uint32_t>(from))),
                           g.hostSpan(track, o.end_ns(), e.start_ns)});
          ++st.thread_handoffs;
        }
      }
      const int32_t waited = awaitedBy(c);
      const int32_t await = keep_waits ? waited : -1;
      const int64_t oh = ed.api_call_overhead_ns;
      if (await < 0) {
        int64_t d = std::max<int64_t>(0, e.dur_ns - oh);
        if (ed.free_launches && last_own_op[c] >= 0) d = 0;  // a launch inside the graph
        if (waited >= 0)  // the wait dropped: what the call took besides waiting
          d = std::min(d, std::max<int64_t>(0, e.dur_ns - std::max<int64_t>(
                                                   0, std::min(e.end_ns(), g.endOf(static_cast<uint32_t>(waited))) - e.start_ns)));
        edges.push_back({g.end(c), static_cast<int32_t>(g.start(c)), d});
      } else {
        int64_t we = g.endOf(static_cast<uint32_t>(await));
        int64_t tail = e.end_ns() - std::max(e.start_ns, we);
        if (oh > 0) tail = std::max<int64_t>(std::min<int64_t>(tail, 0), tail - oh);
        edges.push_back({g.end(c), static_cast<int32_t>(g.start(c)), std::max<int64_t>(0, tail)});
        edges.push_back({g.end(c), static_cast<int32_t>(g.end(static_cast<uint32_t>(await))), tail});
        if (we > e.start_ns) ++st.sync_waits;
      }
    }
  }
}

// A host time on a thread, replayed: shifted with the call before it (gaps keep their length).
int64_t mapHost(const RankGraph& g, const std::vector<int64_t>& value, uint32_t track, int64_t t) {
  if (track >= g.calls_on_track.size() || g.calls_on_track[track].empty()) return t;
  const auto& list = g.calls_on_track[track];
  auto pos = std::upper_bound(list.begin(), list.end(), t, [&](int64_t v, uint32_t c) { return v < g.startOf(c); });
  if (pos == list.begin()) return t;
  uint32_t c = *(pos - 1);
  const Event& e = g.ev(c);
  if (t >= e.end_ns()) return value[g.end(c)] + g.hostSpan(track, e.end_ns(), t);
  return std::min(value[g.start(c)] + (t - e.start_ns), value[g.end(c)]);
}

}  // namespace

Replay replayRun(const RunAnalysis& run, const ReplayEdits& edits) {
  Replay out;
  std::vector<RankGraph> graphs(run.ranks.size());
  std::vector<Edge> edges;
  uint32_t nodes = 0;
  for (size_t r = 0; r < run.ranks.size(); ++r) {
    RankGraph& g = graphs[r];
    g.ra = &run.ranks[r];
    g.base = nodes;
    edges.reserve(edges.size() + 4 * run.ranks[r].index.gpu_work.size() + 4 * run.ranks[r].index.launches.size());
    buildRank(g, edits, edges, out.stats);
    if (static_cast<uint64_t>(nodes) + 2ull * g.items() > static_cast<uint64_t>(INT32_MAX)) {
      out.reason = "too many events to replay (over 1 billion calls and GPU operations)";
      return out;
    }
    nodes += 2 * g.items();
  }
  // What the replay cannot model gets no number: GPU work without its launches (PyTorch 1.x traces,
  // CUDA-only activities), or a step that outlives the profiler's record window.
  for (const RankGraph& g : graphs) {
    const RankTrace& t = *g.ra->trace;
    int64_t linked = 0;
    for (uint32_t k = 0; k < g.ops.size(); ++k) linked += g.launch_item[g.calls.size() + k] >= 0;
    if (!g.ops.empty() && linked * 2 < static_cast<int64_t>(g.ops.size())) {  // real traces: 84-100 %
      out.reason = fmt::format("rank {}: only {:.0f}% of the GPU work links to a recorded launch call (the trace lacks "
                               "runtime events or correlation ids): replay unavailable",
                               t.rank, 100.0 * static_cast<double>(linked) / static_cast<double>(g.ops.size()));
      return out;
    }
    int64_t recorded_end = INT64_MIN;
    for (const Event& e : t.events)
      if (!e.hasRole(kRoleStep) && e.kind != EventKind::kGpuRange) recorded_end = std::max(recorded_end, e.end_ns());
    for (const StepWindow& w : g.ra->windows)  // more of the step unrecorded than recorded
      if (w.annotated && w.cpu_end_ns - recorded_end > std::max<int64_t>(kClockToleranceNs, recorded_end - w.cpu_begin_ns)) {
        out.reason = fmt::format("rank {}: step {} ends {:.3f} ms after the last recorded event (cut by the profiler's "
                                 "record window): replay unavailable",
                                 t.rank, w.number, static_cast<double>(w.cpu_end_ns - recorded_end) / 1e6);
        return out;
      }
  }
  // Collectives joined across ranks: member j ends at f_j + x + max_j'(shift_j' - u_j'), with x
  // the shortest member's duration (the transfer; the others also waited), shift = replayed -
  // traced start. Unedited, that is f_j; it needs no common clock between ranks.
  std::map<std::pair<std::string_view, int64_t>, std::vector<std::pair<uint32_t, uint32_t>>> groups;
  for (uint32_t r = 0; r < graphs.size(); ++r) {
    const RankGraph& g = graphs[r];
    const RankTrace& t = *g.ra->trace;
    for (uint32_t k = 0; k < g.ops.size(); ++k) {
      const Event& e = t.events[g.ops[k]];
      if (!e.collective) continue;
      const Collective& c = t.collectives[e.collective - 1];
      uint32_t item = static_cast<uint32_t>(g.calls.size()) + k;
      if (c.process_group == 0 || c.seq < 0) {  // cannot be joined: its own duration
        edges.push_back({g.end(item), static_cast<int32_t>(g.start(item)), scaled(e.dur_ns, scaleOf(*g.ra, g.ops[k], edits))});
        continue;
      }
      groups[{t.strings.view(c.process_group), c.seq}].push_back({r, item});
    }
  }
  for (const auto& [key, members] : groups) {
    int64_t x = INT64_MAX;
    for (auto [r, item] : members) x = std::min(x, graphs[r].ev(item).dur_ns);
    out.stats.collective_groups += members.size() > 1;
    for (auto [r, item] : members) {
      const RankGraph& g = graphs[r];
      const Event& e = g.ev(item);
      int64_t xs = scaled(x, scaleOf(*g.ra, g.ops[item - g.calls.size()], edits));
      for (auto [r2, item2] : members) {
        const Event& e2 = graphs[r2].ev(item2);
        edges.push_back({g.end(item), static_cast<int32_t>(graphs[r2].start(item2)), e.end_ns() + xs - e2.start_ns - e2.dur_ns});
      }
    }
  }
  // Longest paths in dependency order (Kahn); a cycle means the trace's clocks contradict its
  // dependencies, and no number is better than a wrong one.
  std::vector<int64_t> value(nodes, kUnset);
  std::vector<uint32_t> indeg(nodes, 0), first(nodes + 1, 0);
  for (const Edge& e : edges) {
    if (e.pred < 0) {
      value[e.node] = std::max(value[e.node], e.off);
    } else {
      ++indeg[e.node];
      ++first[static_cast<uint32_t>(e.pred) + 1];
    }
  }
  for (uint32_t n = 0; n < nodes; ++n) first[n + 1] += first[n];
  std::vector<std::pair<uint32_t, int64_t>> succ(first[nodes]);
  {
    std::vector<uint32_t> fill(first.begin(), first.end() - 1);
    for (const Edge& e : edges)
      if (e.pred >= 0) succ[fill[static_cast<uint32_t>(e.pred)]++] = {e.node, e.off};
  }
  edges.clear();
  edges.shrink_to_fit();
  std::vector<uint32_t> queue;
  queue.reserve(nodes);
  for (uint32_t n = 0; n < nodes; ++n)
    if (indeg[n] == 0) queue.push_back(n);
  for (size_t q = 0; q < queue.size(); ++q) {
    uint32_t n = queue[q];
    for (uint32_t k = first[n]; k < first[n + 1]; ++k) {
      auto [m, off] = succ[k];
      if (value[n] != kUnset) value[m] = std::max(value[m], value[n] + off);
      if (--indeg[m] == 0) queue.push_back(m);
    }
  }
  if (queue.size() != nodes) {
    out.reason = "the trace's dependencies form a cycle (host and GPU clocks disagree): replay unavailable";
    return out;
  }
  // Step windows, traced and replayed.
  double traced_sum = 0, replayed_sum = 0, n = 0;
  for (const RankGraph& g : graphs) {
    const RankAnalysis& ra = *g.ra;
    const RankTrace& t = *ra.trace;
    RankReplay rr;
    rr.rank = t.rank;
    int64_t last_begin = kUnset;
    uint32_t step_track = 0;
    for (uint32_t s : ra.index.step_annotations)
      if (t.events[s].start_ns > last_begin) last_begin = t.events[s].start_ns, step_track = t.events[s].track;
    for (const StepWindow& w : ra.windows) {
      int64_t rb, re;
      if (!w.annotated) {  // the span of all GPU work
        rb = INT64_MAX, re = INT64_MIN;
        for (uint32_t k = 0; k < g.ops.size(); ++k) {
          uint32_t item = static_cast<uint32_t>(g.calls.size()) + k;
          rb = std::min(rb, value[g.start(item)]);
          re = std::max(re, value[g.end(item)]);
        }
      } else {
        rb = mapHost(g, value, step_track, w.begin_ns);
        if (w.begin_ns != last_begin) {
          re = mapHost(g, value, step_track, w.end_ns);
        } else {  // the last step also owns the GPU work it launched
          re = mapHost(g, value, step_track, w.cpu_end_ns);
          for (uint32_t k = 0; k < g.ops.size(); ++k) {
            uint32_t item = static_cast<uint32_t>(g.calls.size()) + k;
            int32_t l = g.launch_item[item];
            if (l < 0) continue;
            int64_t launched = g.startOf(static_cast<uint32_t>(l));
            if (launched >= w.cpu_begin_ns && launched < w.cpu_end_ns) re = std::max(re, value[g.end(item)]);
          }
        }
      }
      ReplayedWindow x{w.number, w.length(), re - rb};
      traced_sum += static_cast<double>(x.traced_ns);
      replayed_sum += static_cast<double>(x.replayed_ns);
      n += 1;
      if (x.traced_ns > 0)
        out.worst_error = std::max(out.worst_error, std::abs(static_cast<double>(x.replayed_ns - x.traced_ns)) /
                                                        static_cast<double>(x.traced_ns));
      rr.windows.push_back(x);
    }
    out.ranks.push_back(std::move(rr));
  }
  if (n > 0) {
    out.traced_step_ns = traced_sum / n;
    out.replayed_step_ns = replayed_sum / n;
  }
  out.available = true;
  return out;
}

std::vector<Replay> replayRunAll(const RunAnalysis& run, const std::vector<ReplayEdits>& edits, unsigned threads) {
  std::vector<Replay> out(edits.size());
  if (threads == 0) threads = std::min(4u, std::max(1u, std::thread::hardware_concurrency()));
  threads = static_cast<unsigned>(std::min<size_t>(threads, edits.size()));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < edits.size(); i = next++) out[i] = replayRun(run, edits[i]);
  };
  std::vector<std::thread> pool;
  for (unsigned k = 1; k < threads; ++k) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  return out;
}

}  // namespace gpudoctor
