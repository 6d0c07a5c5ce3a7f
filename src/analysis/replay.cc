#include "analysis/replay.h"

#include <span>
#include "analysis/host_work.h"

#include "analysis/breakdown.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
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
// An inferred event wait whose waiting work started more than this before the awaited work ended
// in the trace is not one (the GPU's timestamps are one clock).
constexpr int64_t kEventWaitToleranceNs = 500;
// A host thread idle this long between two calls, with no host event recorded meanwhile, is taken
// to wait for the call of another thread that ended last before it resumed.
constexpr int64_t kHandoffIdleNs = 20000;
// A launch call this long waited for something: a launch costs 2-20 us even under the profiler.
constexpr int64_t kQueueWaitMinNs = 200000;

// Edge kinds: how an edge's offset follows from the edits (value[node] = max over edges of
// value[pred] + offset; pred -1: the offset alone).
enum EdgeKind : uint8_t {
  kRoot,       // a start with nothing before it: its traced time
  kRootSpan,   // a thread's first call: the thread's first host event's time (c) + the host time since
  kLaunch,     // launch call's start -> its GPU work's start (the traced latency)
  kStream,     // previous work on the stream -> this work
  kCross,      // inferred cross-stream wait
  kGpu,        // GPU work's start -> its end: its duration, edited (aux: item)
  kHostGap,    // host time on the node's thread from `c` to the node's call's start, edited
  kHostSplit,  // two host spans (aux: index into RankGraph::splits)
  kCallDur,    // a call's start -> its end (aux: item; c: the part it waited, -1 none)
  kSyncTail,   // a waiting call's start -> end: what it took after the wait ended (c)
  kSyncAwait,  // the awaited GPU work's end -> the waiting call's end (c)
  kJoin,       // a collective member's start -> another member's end (aux: index into joins)
};
// When an edge holds: always, only while synchronizing calls wait, only once they do not.
// Edges that hold only with or without blocking waits: any sync (kIfWaits, kIfNoWaits), or a
// synchronous copy from pageable memory (kIfCopyWaits, kIfNoCopyWaits).
enum EdgeCond : uint8_t { kAlways, kIfWaits, kIfNoWaits, kIfCopyWaits, kIfNoCopyWaits };

struct Edge {
  uint32_t node;
  int32_t pred;
  int64_t c;
  uint32_t aux;
  uint16_t rank;
  uint8_t kind, cond;
};

// An optimizer step's operators on a thread: [begin, end) and what two of its operators cost.
struct OptRegion {
  int64_t begin, end, kept_ns;
};

int64_t scaled(int64_t ns, double s);

struct RankGraph {
  const RankAnalysis* ra = nullptr;
  // The step windows replayed: the first kReplayMaxSteps of the rank's (all of them in a trace of
  // that many or fewer), and the host time from which nothing is replayed: the end of the window
  // after the last one replayed (its calls stay, so the last step replayed has the launches that
  // follow it), or none.
  std::span<const StepWindow> windows;
  int64_t host_cut = INT64_MAX;
  uint16_t index = 0;                 // into RunAnalysis::ranks
  uint32_t base = 0;                  // node id of item 0's start
  std::vector<uint32_t> calls, ops;   // event index per item: calls are items [0, calls), ops follow
  std::vector<int32_t> item_of;       // event -> item, -1
  // Per track (index into RankTrace::tracks): a rank has tens of tracks, so plain vectors.
  std::vector<std::vector<uint32_t>> calls_on_track;  // call items in start order
  std::vector<std::vector<int64_t>> host_starts;      // recorded host events' starts per thread
  std::vector<std::vector<int64_t>> host_ends;        // ... and their ends, in the same order
  // The same without Python frames (with_stack): what shows a thread working rather than waiting;
  // a frame such as Tensor.backward spans the wait for autograd's thread.
  std::vector<std::vector<int64_t>> work_starts, work_ends;
  std::vector<std::vector<std::pair<int64_t, int64_t>>> loader;  // in-process loader ranges per thread
  std::vector<std::vector<std::pair<int64_t, int64_t>>> loader_wait;  // multi-process fetches per thread
  int64_t loader_handoff_ns = 0;  // the shortest multi-process fetch
  std::vector<std::vector<std::pair<int64_t, int64_t>>> own_work;  // the host's own work per thread (host_work.h)
  std::vector<std::vector<std::pair<int64_t, int64_t>>> recompute;  // forward ops re-run in backward, per thread
  std::vector<std::vector<std::pair<int64_t, int64_t>>> ckpt_wrapper;  // the checkpoint wrapper's host work, per thread
  // What a CUDA graph of the step can capture, on the host timeline: per step, from its first call
  // that launches GPU work to its last one's end (any thread). Host work outside (logging, metrics,
  // Python between steps) stays eager when the step is graphed.
  std::vector<std::pair<int64_t, int64_t>> launch_spans;
  // Autograd's AccumulateGrad nodes' starts per thread: one per parameter per backward pass.
  std::vector<std::vector<int64_t>> accum_grad;
  double ckpt_blocks_per_ns = 0;  // checkpointed blocks per ns of the wrapper regions' host time
  int64_t host_gap_p25 = 0;       // ReplayModel::hostGapP25
  // Where autocast would cast (RankAnalysis::autocast_casts), per thread: the sites' times and the
  // casts before each (cast_cum[k]: the casts of the sites before the k-th; one more entry).
  std::vector<std::vector<int64_t>> cast_at;
  std::vector<std::vector<double>> cast_cum;
  double castsIn(uint32_t track, int64_t from, int64_t to) const {
    const auto& v = cast_at[track];
    const size_t a = std::lower_bound(v.begin(), v.end(), from) - v.begin(), b = std::lower_bound(v.begin(), v.end(), to) - v.begin();
    return cast_cum[track][b] - cast_cum[track][a];
  }
  std::vector<std::vector<int64_t>> step_starts;                  // step ranges' starts per thread
  std::vector<std::vector<OptRegion>> opt;                        // optimizer steps' operators per thread
  // kHostSplit spans: [0, 1) and [2, 3), and the recorded host events starting in each (4, 5)
  std::vector<std::array<int64_t, 6>> splits;
  std::vector<int64_t> item_start, item_end;  // copies of the items' times (the events are 64 B each: far apart)
  std::vector<uint32_t> item_track;
  std::vector<int32_t> launch_item;  // per GPU-work item: its launch call's item, -1
  // Per item. Calls: kOwnsWork, kSyncRole, kGraphLaunch, kLaunchesScores (launches only the score
  // matrix's kernels of a materialized attention); both: kInOptimizer, kInRecompute; GPU work:
  // kInGraph, kCollective, kAttnGemm, kAttnScores, kPageableHtoD, kAttnFusedFp32; calls again:
  // kAttrQuery (cudaFuncGetAttributes), kLaunchesPageable (a host-to-device copy from pageable memory).
  std::vector<uint16_t> item_flags;
  static constexpr uint16_t kOwnsWork = 1, kInOptimizer = 2, kSyncRole = 4, kGraphLaunch = 8, kInGraph = 16,
                            kCollective = 32, kAttnGemm = 64, kAttnScores = 128, kLaunchesScores = 256,
                            kPageableHtoD = 512, kInRecompute = 1024, kAttnFusedFp32 = 2048, kAttrQuery = 4096,
                            kLaunchesPageable = 8192;
  std::vector<uint32_t> work_count;  // per call: the GPU work it launched
  // The part of [from, to) inside the thread's loader ranges.
  int64_t loaderOverlap(uint32_t track, int64_t from, int64_t to) const { return overlap(loader[track], from, to); }
  // The part of [from, to) inside sorted, disjoint ranges.
  static int64_t overlap(const std::vector<std::pair<int64_t, int64_t>>& v, int64_t from, int64_t to) {
    int64_t in = 0;
    auto it = std::upper_bound(v.begin(), v.end(), std::make_pair(from, INT64_MAX));
    if (it != v.begin()) --it;
    for (; it != v.end() && it->first < to; ++it) in += std::max<int64_t>(0, std::min(it->second, to) - std::max(it->first, from));
    return in;
  }
  // What [from, to) loses when the multi-process fetches in it stop waiting: each fetch keeps the
  // hand-off of a ready batch (the shortest fetch), the rest of its overlap goes.
  int64_t loaderWaitCut(uint32_t track, int64_t from, int64_t to) const {
    const auto& v = loader_wait[track];
    auto it = std::upper_bound(v.begin(), v.end(), std::make_pair(from, INT64_MAX));
    if (it != v.begin()) --it;
    int64_t cut = 0;
    for (; it != v.end() && it->first < to; ++it) {
      const int64_t len = it->second - it->first, in = std::max<int64_t>(0, std::min(it->second, to) - std::max(it->first, from));
      if (len > loader_handoff_ns && in > 0)
        cut += static_cast<int64_t>(static_cast<double>(in) * static_cast<double>(len - loader_handoff_ns) / static_cast<double>(len));
    }
    return cut;
  }
  // The part of [from, to) inside the thread's optimizer steps' operators.
  int64_t optOverlap(uint32_t track, int64_t from, int64_t to) const {
    const auto& v = opt[track];  // sorted by begin, disjoint: from the last one starting before `from`
    auto it = std::upper_bound(v.begin(), v.end(), from, [](int64_t x, const OptRegion& r) { return x < r.begin; });
    if (it != v.begin()) --it;
    int64_t in = 0;
    for (; it != v.end() && it->begin < to; ++it) in += std::max<int64_t>(0, std::min(it->end, to) - std::max(it->begin, from));
    return in;
  }
  bool inRecompute(uint32_t track, int64_t t) const {
    const auto& v = recompute[track];
    auto it = std::upper_bound(v.begin(), v.end(), std::make_pair(t, INT64_MAX));
    return it != v.begin() && t < std::prev(it)->second;
  }
  // The optimizer region holding t on the thread, or null.
  const OptRegion* optAt(uint32_t track, int64_t t) const {
    const auto& v = opt[track];
    auto it = std::upper_bound(v.begin(), v.end(), t, [](int64_t x, const OptRegion& r) { return x < r.begin; });
    if (it == v.begin()) return nullptr;
    --it;
    return t < it->end ? &*it : nullptr;
  }
  // The recorded host events that start in [from, to) on a thread.
  int64_t eventsIn(uint32_t track, int64_t from, int64_t to) const {
    const auto& v = host_starts[track];
    return std::lower_bound(v.begin(), v.end(), to) - std::lower_bound(v.begin(), v.end(), from);
  }
  // Host time in [from, to) on a thread less the profiler's cost of the events that start in it
  // and less what the edits removed. events: eventsIn(track, from, to) where the caller has it (an
  // edge keeps its count: the same in every replay), else < 0.
  int64_t hostSpan(uint32_t track, int64_t from, int64_t to, const ReplayEdits& ed, int64_t events = -1) const {
    if (to <= from) return to - from;
    int64_t span = to - from;
    if (ed.drop_recompute && !recompute[track].empty()) span -= overlap(recompute[track], from, to);
    if (ed.drop_recompute && ed.checkpoint_block_ns > 0 && !ckpt_wrapper[track].empty()) {
      const double share = std::min(1.0, ckpt_blocks_per_ns * static_cast<double>(ed.checkpoint_block_ns));
      span = std::max<int64_t>(
          0, span - std::llround(share * static_cast<double>(overlap(ckpt_wrapper[track], from, to))));
    }
    // The profiler's cost of the events that start in the gap ...
    int64_t removal = 0;
    if (ed.host_event_overhead_ns != 0)
      removal = (events >= 0 ? events : eventsIn(track, from, to)) * profilerCost(ed.host_event_overhead_ns, ed);
    const bool free_host = ed.free_launches, loader_off = ed.loader_off_thread;
    if (free_host || loader_off) {
      int64_t in = loaderOverlap(track, from, to);
      // Graphed: what stays eager is the loader, the host work outside the steps' launch spans and,
      // where the optimizer cannot be captured, its step.
      int64_t eager = 0;
      if (free_host) {
        eager = (to - from) - overlap(launch_spans, from, to) + (ed.graph_keeps_optimizer ? optOverlap(track, from, to) : 0);
        eager = std::min(eager, span - in);
      }
      const int64_t kept = (free_host ? eager : span - in) + (loader_off ? 0 : in);
      // ... of the part that stays, pro rata.
      removal = span > 0 ? std::llround(static_cast<double>(removal) * static_cast<double>(kept) / static_cast<double>(span)) : 0;
      span = kept;
    }
    span = std::max<int64_t>(0, span - removal);
    if (ed.drop_loader_waits && !loader_wait[track].empty()) span = std::max<int64_t>(0, span - loaderWaitCut(track, from, to));
    if (ed.host_work_off_thread && !own_work[track].empty()) span = std::max<int64_t>(0, span - overlap(own_work[track], from, to));
    if (free_host && ed.graphed_param_ns > 0) {  // the graphed calls' own cost, per AccumulateGrad node
      const auto& v = accum_grad[track];
      span += (std::lower_bound(v.begin(), v.end(), to) - std::lower_bound(v.begin(), v.end(), from)) * ed.graphed_param_ns;
    }
    if (ed.fused_optimizer && !free_host && span > 0) {
      // Host time inside optimizer regions scales to their kept share.
      double cut = 0;
      const auto& v = opt[track];
      auto it = std::upper_bound(v.begin(), v.end(), from, [](int64_t x, const OptRegion& r) { return x < r.begin; });
      if (it != v.begin()) --it;
      for (; it != v.end() && it->begin < to; ++it) {
        int64_t in = std::max<int64_t>(0, std::min(it->end, to) - std::max(it->begin, from));
        if (in > 0) cut += static_cast<double>(in) * (1 - keptShare(*it));
      }
      span -= static_cast<int64_t>(std::llround(static_cast<double>(span) * cut / static_cast<double>(to - from)));
    }
    if (ed.autocast_cast_ns > 0 && !free_host && !cast_at[track].empty())  // graphed, the casts are kernels
      span += std::llround(castsIn(track, from, to) * static_cast<double>(ed.autocast_cast_ns));
    if (ed.micro_batch_merge > 1 && span > 0) {  // after the profiler's cost: of what the job itself spends
      const int64_t kept = loaderOverlap(track, from, to) + optOverlap(track, from, to);
      const double passes = static_cast<double>(std::max<int64_t>(0, to - from - kept)) / static_cast<double>(to - from);
      span -= std::llround(static_cast<double>(span) * passes * (1.0 - 1.0 / ed.micro_batch_merge));
    }
    if (index < ed.rank_host_scale.size() && ed.rank_host_scale[index] != 1.0)
      span = static_cast<int64_t>(std::llround(static_cast<double>(span) * ed.rank_host_scale[index]));
    return span;
  }
  // A profiler cost per event at this rank's host speed.
  int64_t profilerCost(int64_t ns, const ReplayEdits& ed) const {
    return index < ed.rank_profiler_scale.size() ? scaled(ns, ed.rank_profiler_scale[index]) : ns;
  }
  static double keptShare(const OptRegion& r) {
    return r.end > r.begin ? std::min(1.0, static_cast<double>(r.kept_ns) / static_cast<double>(r.end - r.begin)) : 1.0;
  }
  uint32_t items() const { return static_cast<uint32_t>(calls.size() + ops.size()); }
  uint32_t start(uint32_t item) const { return base + 2 * item; }
  uint32_t end(uint32_t item) const { return base + 2 * item + 1; }
  uint32_t itemOfNode(uint32_t node) const { return (node - base) / 2; }
  int64_t startOf(uint32_t item) const { return item_start[item]; }
  int64_t endOf(uint32_t item) const { return item_end[item]; }
  uint32_t trackOf(uint32_t item) const { return item_track[item]; }
  const Event& ev(uint32_t item) const {
    return ra->trace->events[item < calls.size() ? calls[item] : ops[item - calls.size()]];
  }
};

// The host-speed gauges' quantile (num/den of the way up) of their samples; 0 under 100 samples (a
// graphed step: too few to tell the host's speed).
int64_t gaugeQuantile(std::vector<int64_t>& v, size_t num, size_t den) {
  if (v.size() < 100) return 0;
  auto q = v.begin() + static_cast<std::ptrdiff_t>(v.size() * num / den);
  std::nth_element(v.begin(), q, v.end());
  return *q;
}

int64_t scaled(int64_t ns, double s) { return s == 1.0 ? ns : static_cast<int64_t>(std::llround(ns * s)); }

}  // namespace

struct ReplayModel::Impl {
  std::string reason;  // not empty: unavailable
  std::vector<RankGraph> graphs;
  std::vector<std::vector<Edge>> parts;  // while building: each rank's host and GPU edges, the joins
  std::vector<Edge> edges;  // in dependency order of their nodes, grouped by node
  std::vector<uint32_t> first_edge;  // per node: its first edge, UINT32_MAX for none
  std::vector<std::array<int64_t, 2>> joins;  // kJoin: the transfer time x, the member's GPU item
  uint32_t nodes = 0;
  ReplayGraphStats stats;

  void buildRank(uint16_t rank, RankGraph& g);
  bool order();
  double scaleOf(uint16_t rank, uint32_t item, const ReplayEdits& ed) const;
  int64_t offsetOf(const Edge& e, const ReplayEdits& ed) const;
  // The category of an edge on the critical path, and the part of its offset that is input.
  PathCategory categoryOf(const Edge& e) const;
  Replay evaluate(const ReplayEdits& ed) const;
};

namespace {

// GPU work the ranking counts as copies, communication or compute.
PathCategory gpuCategory(const Event& e) {
  if (e.kind == EventKind::kMemcpy || e.kind == EventKind::kMemset) return PathCategory::kCopies;
  if (e.collective || e.hasRole(kRoleCollective)) return PathCategory::kCommunication;
  return PathCategory::kCompute;
}

}  // namespace

double ReplayModel::Impl::scaleOf(uint16_t rank, uint32_t item, const ReplayEdits& ed) const {
  const RankGraph& g = graphs[rank];
  const uint32_t event = g.ops[item - g.calls.size()];
  const Event& e = g.ra->trace->events[event];
  double s;
  if (e.kind == EventKind::kMemcpy) {
    s = ed.memcpy_scale;
    if (g.item_flags[item] & RankGraph::kPageableHtoD) {
      if (ed.pageable_htod_gbps > 0 && e.bytes > 0 && e.dur_ns > 0)  // bytes / (GB/s) = ns
        s *= std::min(1.0, static_cast<double>(e.bytes) / ed.pageable_htod_gbps / static_cast<double>(e.dur_ns));
      else
        s *= ed.pageable_htod_scale;
    }
  } else if (e.kind == EventKind::kMemset) {
    s = ed.memset_scale;
  } else {
    const uint16_t flags = g.item_flags[item];
    if (ed.fused_attention && (flags & RankGraph::kAttnScores)) return 0;
    if ((flags & RankGraph::kAttnGemm) && ed.attention_gemm_scale != 1)
      s = ed.attention_gemm_scale;
    else if ((flags & RankGraph::kAttnFusedFp32) && ed.fused_attention_fp32_scale != 1)
      s = ed.fused_attention_fp32_scale;
    else
      s = ed.kernel_scale[static_cast<size_t>(g.ra->index.class_of_event[event])];
    if (rank < ed.rank_compute_scale.size() && gpuCategory(e) == PathCategory::kCompute) s *= ed.rank_compute_scale[rank];
  }
  if (ed.optimizer_gpu_scale != 1 && (g.item_flags[item] & RankGraph::kInOptimizer)) s *= ed.optimizer_gpu_scale;
  if (ed.drop_recompute && (g.item_flags[item] & RankGraph::kInRecompute)) return 0;
  return s;
}

int64_t ReplayModel::Impl::offsetOf(const Edge& e, const ReplayEdits& ed) const {
  switch (e.kind) {
    case kRoot:
      return e.c;
    case kLaunch:
      // Under the profiler a graph's work trickles out of its launch call while CUPTI instruments
      // each node (the call's cost per node: graph_node_overhead_ns); without it, the work follows
      // the launch as fast as the GPU runs it: a node's latency after the launch call's start is
      // capped as the gaps between the graph's nodes are.
      if (ed.graph_gap_cap_ns >= 0 && e.c > ed.graph_gap_cap_ns &&
          (graphs[e.rank].item_flags[graphs[e.rank].itemOfNode(e.node)] & RankGraph::kInGraph))
        return ed.graph_gap_cap_ns;
      return e.c;
    case kStream: case kCross: {
      if (e.c <= 0) return e.c;
      if (ed.graph_gap_cap_ns >= 0 &&  // a graph's node after another, on its stream or another one
          (graphs[e.rank].item_flags[graphs[e.rank].itemOfNode(e.node)] & RankGraph::kInGraph))
        return std::min(e.c, ed.graph_gap_cap_ns);
      return std::max<int64_t>(0, e.c - ed.gpu_gap_overhead_ns);
    }
    case kGpu: {
      const RankGraph& g = graphs[e.rank];
      const Event& w = g.ev(e.aux);
      const double sc = scaleOf(e.rank, e.aux, ed);
      int64_t d = scaled(w.dur_ns, sc);
      if (w.kind == EventKind::kKernel && sc > 0) {
        const size_t k = static_cast<size_t>(g.ra->index.class_of_event[g.ops[e.aux - g.calls.size()]]);
        d = std::max(d, std::min(w.dur_ns, ed.kernel_floor_ns[k])) + ed.kernel_add_ns[k];
        if (ed.optimizer_kernel_add_ns != 0 && (g.item_flags[e.aux] & RankGraph::kInOptimizer)) d += ed.optimizer_kernel_add_ns;
        if (ed.micro_batch_merge > 1 && !(g.item_flags[e.aux] & (RankGraph::kInOptimizer | RankGraph::kCollective)) &&
            !isCommunication(static_cast<KernelClass>(k)))
          d -= std::min(d, ed.merge_kernel_fixed_ns) * (ed.micro_batch_merge - 1) / ed.micro_batch_merge;
      }
      return d;
    }
    case kHostGap: {
      const RankGraph& g = graphs[e.rank];
      uint32_t item = g.itemOfNode(e.node);
      return g.hostSpan(g.trackOf(item), e.c, g.startOf(item), ed, e.aux);  // aux: the events in it
    }
    case kRootSpan: {
      const RankGraph& g = graphs[e.rank];
      uint32_t item = g.itemOfNode(e.node);
      return e.c + g.hostSpan(g.trackOf(item), e.c, g.startOf(item), ed, e.aux);
    }
    case kHostSplit: {
      const RankGraph& g = graphs[e.rank];
      uint32_t track = g.trackOf(g.itemOfNode(e.node));
      const auto& sp = g.splits[e.aux];
      return g.hostSpan(track, sp[0], sp[1], ed, sp[4]) + g.hostSpan(track, sp[2], sp[3], ed, sp[5]);
    }
    case kCallDur: {
      const RankGraph& g = graphs[e.rank];
      const Event& ce = g.ev(e.aux);
      const uint16_t flags = g.item_flags[e.aux];
      const bool idle = !(flags & (RankGraph::kOwnsWork | RankGraph::kSyncRole | RankGraph::kGraphLaunch));
      const int64_t call_ns = (flags & RankGraph::kAttrQuery) && ed.attr_call_overhead_ns >= 0 ? ed.attr_call_overhead_ns
                              : idle && ed.idle_call_overhead_ns >= 0                        ? ed.idle_call_overhead_ns
                                                                                              : ed.api_call_overhead_ns;
      int64_t d = std::max<int64_t>(0, ce.dur_ns - g.profilerCost(call_ns, ed));
      if (ed.free_launches && (flags & RankGraph::kOwnsWork) &&
          !(ed.graph_keeps_optimizer && (flags & RankGraph::kInOptimizer)))
        d = 0;  // a launch inside the graph
      if (ed.fused_attention && (flags & RankGraph::kLaunchesScores)) d = 0;  // inside the fused kernel
      if (ed.drop_recompute && (flags & RankGraph::kInRecompute)) d = 0;      // not re-run
      if (ed.micro_batch_merge > 1 && !(flags & RankGraph::kInOptimizer)) d /= ed.micro_batch_merge;  // one pass of A
      if ((flags & RankGraph::kGraphLaunch) && ed.graph_node_overhead_ns > 0)  // keeps 1 us per 100 nodes
        d = std::max<int64_t>(std::min<int64_t>(d, 10 * static_cast<int64_t>(g.work_count[e.aux])),
                              d - ed.graph_node_overhead_ns * static_cast<int64_t>(g.work_count[e.aux]));
      if (ed.fused_optimizer && (flags & RankGraph::kInOptimizer)) {
        if (const OptRegion* r = g.optAt(g.trackOf(e.aux), ce.start_ns))
          d = static_cast<int64_t>(std::llround(static_cast<double>(d) * RankGraph::keptShare(*r)));
      }
      if (e.c >= 0) d = std::min(d, std::max<int64_t>(0, ce.dur_ns - e.c));  // the wait dropped
      if (e.rank < ed.rank_host_scale.size() && ed.rank_host_scale[e.rank] != 1.0)
        d = static_cast<int64_t>(std::llround(static_cast<double>(d) * ed.rank_host_scale[e.rank]));
      return d;
    }
    case kSyncTail: case kSyncAwait: {
      int64_t tail = e.c;
      const int64_t oh = graphs[e.rank].profilerCost(ed.api_call_overhead_ns, ed);
      if (oh > 0) tail = std::max<int64_t>(std::min<int64_t>(tail, 0), tail - oh);
      return e.kind == kSyncTail ? std::max<int64_t>(0, tail) : tail;
    }
    case kJoin: {
      const auto& j = joins[e.aux];
      return e.c + scaled(j[0], scaleOf(e.rank, static_cast<uint32_t>(j[1]), ed));
    }
  }
  return e.c;
}

PathCategory ReplayModel::Impl::categoryOf(const Edge& e) const {
  switch (e.kind) {
    case kLaunch: case kHostGap: case kHostSplit: case kRootSpan: return PathCategory::kHostLaunch;
    case kGpu: return gpuCategory(graphs[e.rank].ev(e.aux));
    case kJoin: return PathCategory::kCommunication;
    case kCallDur:
      return (graphs[e.rank].item_flags[e.aux] & RankGraph::kSyncRole) ? PathCategory::kSync : PathCategory::kHostLaunch;
    case kSyncTail: case kSyncAwait: return PathCategory::kSync;
    default: return PathCategory::kOtherIdle;
  }
}

// Items, host order, launches, stream order, cross-stream waits and sync waits of one rank.
void ReplayModel::Impl::buildRank(uint16_t rank, RankGraph& g) {
  ReplayGraphStats& st = stats;
  std::vector<Edge> host_edges;
  auto add = [&](uint32_t node, int32_t pred, uint8_t kind, int64_t c, uint32_t aux = 0, uint8_t cond = kAlways) {
    host_edges.push_back({node, pred, c, aux, rank, kind, cond});
  };
  const RankTrace& t = *g.ra->trace;
  const TraceIndex& idx = g.ra->index;
  g.item_of.assign(t.events.size(), -1);
  const size_t tracks = t.tracks.size();
  g.calls_on_track.assign(tracks, {});
  g.host_starts.assign(tracks, {});
  g.host_ends.assign(tracks, {});
  g.work_starts.assign(tracks, {});
  g.work_ends.assign(tracks, {});
  g.loader.assign(tracks, {});
  g.loader_wait.assign(tracks, {});
  g.own_work = g.ra->host_work.stretches;
  g.own_work.resize(tracks);
  g.accum_grad.assign(tracks, {});
  std::vector<int8_t> accum_name(t.strings.size(), -1);  // per name: an AccumulateGrad node, -1 not yet known
  std::vector<int8_t> attr_name(t.strings.size(), -1);   // per name: cudaFuncGetAttributes, -1 not yet known
  std::vector<int64_t> accum_end(tracks, INT64_MIN);
  // Sorted, disjoint ranges per thread from regions in start order.
  auto merge = [&](const std::vector<HostRegion>& regions, std::vector<std::vector<std::pair<int64_t, int64_t>>>& out) {
    out.assign(tracks, {});
    for (const HostRegion& r : regions)
      if (r.track < tracks && r.begin_ns < r.end_ns) {
        auto& v = out[r.track];
        if (!v.empty() && r.begin_ns < v.back().second) v.back().second = std::max(v.back().second, r.end_ns);
        else v.push_back({r.begin_ns, r.end_ns});
      }
  };
  merge(g.ra->checkpoint.recompute, g.recompute);
  merge(g.ra->checkpoint.wrapper, g.ckpt_wrapper);
  int64_t wrapper_ns = 0;
  for (const auto& v : g.ckpt_wrapper)
    for (const auto& [b, e] : v) wrapper_ns += e - b;
  if (wrapper_ns > 0) g.ckpt_blocks_per_ns = static_cast<double>(g.ra->checkpoint.blocks()) / static_cast<double>(wrapper_ns);
  g.cast_at.assign(tracks, {});
  g.cast_cum.assign(tracks, {0.0});
  for (const CastSite& c : g.ra->autocast_casts)  // in time order
    if (c.track < tracks) g.cast_at[c.track].push_back(c.at_ns), g.cast_cum[c.track].push_back(g.cast_cum[c.track].back() + c.casts);
  g.step_starts.assign(tracks, {});
  g.opt.assign(tracks, {});
  std::vector<std::vector<std::pair<int64_t, int64_t>>> host_ops(tracks);  // top-level operators per thread
  std::vector<std::vector<std::pair<int64_t, int64_t>>> opt_ranges(tracks);
  // One pass over the events (they are far apart in memory): host events, steps, optimizer and
  // loader ranges, and the host calls, top level per thread (a call inside another, a driver call
  // under a runtime call, is part of it).
  std::vector<int64_t> track_end(tracks, INT64_MIN);
  std::vector<uint32_t> track_last(tracks, 0);
  // The host time before each recorded host event since the thread's last event start or end
  // (calls included): ReplayModel::hostGapP25.
  std::vector<std::vector<int64_t>> open_ends(tracks);
  std::vector<int64_t> cursor(tracks, INT64_MIN);
  std::vector<int64_t> gaps;
  for (uint32_t i = 0; i < t.events.size(); ++i) {  // in start order, so each list is sorted
    const Event& e = t.events[i];
    if (e.start_ns >= g.host_cut) break;  // past the windows replayed (GPU work is taken below)
    const bool host_event = e.kind == EventKind::kHostOp || e.kind == EventKind::kRange || e.kind == EventKind::kHostFunction;
    if ((host_event || e.kind == EventKind::kRuntimeCall || e.kind == EventKind::kDriverCall) && e.track < tracks) {
      auto& ends = open_ends[e.track];
      int64_t& at = cursor[e.track];
      // A min-heap of the open events' ends (they nest on a thread, but need not).
      while (!ends.empty() && ends.front() <= e.start_ns) {
        at = std::max(at, ends.front());
        std::pop_heap(ends.begin(), ends.end(), std::greater<int64_t>());
        ends.pop_back();
      }
      if (host_event && at != INT64_MIN && !e.hasRole(kRoleStep)) gaps.push_back(e.start_ns - at);
      at = e.start_ns;
      ends.push_back(e.end_ns());
      std::push_heap(ends.begin(), ends.end(), std::greater<int64_t>());
    }
    if (e.kind == EventKind::kRuntimeCall || e.kind == EventKind::kDriverCall) {
      if (e.start_ns < track_end[e.track]) {
        g.item_of[i] = static_cast<int32_t>(track_last[e.track]);
        continue;
      }
      uint32_t item = static_cast<uint32_t>(g.calls.size());
      g.calls.push_back(i);
      g.item_of[i] = static_cast<int32_t>(item);
      g.calls_on_track[e.track].push_back(item);
      g.item_start.push_back(e.start_ns);
      g.item_end.push_back(e.end_ns());
      g.item_track.push_back(e.track);
      uint16_t flags = e.hasRole(kRoleSyncCall) ? RankGraph::kSyncRole : 0;
      if (e.hasRole(kRoleGraphLaunch)) flags |= RankGraph::kGraphLaunch;
      int8_t& attr = attr_name[e.name];
      if (attr < 0) attr = t.strings.view(e.name) == "cudaFuncGetAttributes" ? 1 : 0;
      if (attr) flags |= RankGraph::kAttrQuery;
      g.item_flags.push_back(flags);
      track_end[e.track] = e.end_ns();
      track_last[e.track] = item;
      continue;
    }
    if (e.kind == EventKind::kHostOp || e.kind == EventKind::kRange || e.kind == EventKind::kHostFunction) {
      g.host_starts[e.track].push_back(e.start_ns);
      g.host_ends[e.track].push_back(e.end_ns());
      if (e.kind != EventKind::kHostFunction) {
        g.work_starts[e.track].push_back(e.start_ns);
        g.work_ends[e.track].push_back(e.end_ns());
      }
    }
    if (e.kind == EventKind::kHostOp) {
      int8_t& accum = accum_name[e.name];
      if (accum < 0) accum = t.strings.view(e.name).ends_with("AccumulateGrad") ? 1 : 0;
      if (accum) {  // the node (autograd::engine::evaluate_function: ...), not the operator inside it
        auto& v = g.accum_grad[e.track];
        if (v.empty() || e.start_ns >= accum_end[e.track]) v.push_back(e.start_ns), accum_end[e.track] = e.end_ns();
      }
      auto& v = host_ops[e.track];
      if (v.empty() || e.start_ns >= v.back().second) v.push_back({e.start_ns, e.end_ns()});
    }
    if (e.hasRole(kRoleStep)) g.step_starts[e.track].push_back(e.start_ns);
    if (e.hasRole(kRoleOptimizerStep)) {
      auto& v = opt_ranges[e.track];
      if (v.empty() || e.start_ns >= v.back().second) v.push_back({e.start_ns, e.end_ns()});
    }
    if (e.hasRole(kRoleDataLoading) && !e.hasRole(kRoleLoaderInProcess)) {
      auto& v = g.loader_wait[e.track];
      if (v.empty() || e.start_ns >= v.back().second) v.push_back({e.start_ns, e.end_ns()});
      if (g.loader_handoff_ns == 0 || e.dur_ns < g.loader_handoff_ns) g.loader_handoff_ns = std::max<int64_t>(1, e.dur_ns);
    }
    if (e.hasRole(kRoleDataLoading) && e.hasRole(kRoleLoaderInProcess)) {
      auto& v = g.loader[e.track];
      if (!v.empty() && e.start_ns < v.back().second) v.back().second = std::max(v.back().second, e.end_ns());
      else v.push_back({e.start_ns, e.end_ns()});
    }
  }
  g.host_gap_p25 = gaugeQuantile(gaps, 1, 4);
  // Each optimizer step: from its first operator to its last operator's end, and two operators'
  // cost at its median operator duration (what a fused step keeps).
  for (size_t tr = 0; tr < tracks; ++tr) {
    const auto& ops = host_ops[tr];
    for (const auto& [b, e] : opt_ranges[tr]) {
      auto lo = std::lower_bound(ops.begin(), ops.end(), std::make_pair(b, INT64_MIN));
      std::vector<int64_t> durs;
      int64_t first = INT64_MAX, last = INT64_MIN;
      for (auto it = lo; it != ops.end() && it->first < e; ++it) {
        if (it->second > e) continue;
        durs.push_back(it->second - it->first);
        first = std::min(first, it->first);
        last = std::max(last, it->second);
      }
      if (durs.empty()) continue;
      auto mid = durs.begin() + static_cast<std::ptrdiff_t>(durs.size() / 2);
      std::nth_element(durs.begin(), mid, durs.end());
      g.opt[tr].push_back({first, last, std::min(last - first, 2 * *mid)});
    }
  }
  // Calls inside an optimizer step's operators.
  for (uint32_t c = 0; c < g.calls.size(); ++c)
    if (!g.opt[g.item_track[c]].empty() && g.optAt(g.item_track[c], g.item_start[c])) g.item_flags[c] |= RankGraph::kInOptimizer;
  for (uint32_t c = 0; c < g.calls.size(); ++c)
    if (g.inRecompute(g.item_track[c], g.item_start[c])) g.item_flags[c] |= RankGraph::kInRecompute;
  const uint32_t nc = static_cast<uint32_t>(g.calls.size());
  host_edges.reserve(3 * static_cast<size_t>(nc));
  // GPU work, and the launch call of each (-1: none recorded).
  g.ops.reserve(idx.gpu_work.size());
  g.launch_item.assign(nc, -1);
  g.work_count.assign(nc, 0);
  // Per kernel name (the pool's id), whether it is FP32 fused attention: -1 not yet known.
  std::vector<int8_t> fp32_attention(t.strings.size(), -1);
  for (uint32_t w : idx.gpu_work) {
    const Event& e = t.events[w];
    uint32_t l = e.correlation < 0 ? IdMap::kNone : idx.launch_of.find(e.correlation);
    int32_t li = l != IdMap::kNone ? g.item_of[l] : -1;
    if (li < 0 && e.start_ns >= g.host_cut) continue;  // launched past the windows replayed, or after them
    const uint32_t j = static_cast<uint32_t>(g.calls.size() + g.ops.size());
    g.item_of[w] = static_cast<int32_t>(j);
    g.ops.push_back(w);
    g.item_start.push_back(e.start_ns);
    g.item_end.push_back(e.end_ns());
    g.item_track.push_back(e.track);
    g.launch_item.push_back(li);
    uint16_t flags = e.collective ? RankGraph::kCollective : 0;
    if (e.kind == EventKind::kMemcpy) {
      const std::string_view name = t.strings.view(e.name);
      if (copyDirOf(name) == CopyDir::kHtoD && isPageableCopy(name)) flags |= RankGraph::kPageableHtoD;
    } else if (e.kind == EventKind::kKernel && idx.class_of_event[w] == KernelClass::kAttentionFused) {
      int8_t& fp32 = fp32_attention[e.name];
      if (fp32 < 0) fp32 = isFp32FusedAttentionKernel(t.strings.view(e.name)) ? 1 : 0;
      if (fp32) flags |= RankGraph::kAttnFusedFp32;
    }
    if (li >= 0) {
      uint16_t& lf = g.item_flags[static_cast<uint32_t>(li)];
      lf |= RankGraph::kOwnsWork;
      ++g.work_count[static_cast<uint32_t>(li)];
      if (lf & RankGraph::kInOptimizer) flags |= RankGraph::kInOptimizer;
      if (lf & RankGraph::kInRecompute) flags |= RankGraph::kInRecompute;
      if (lf & RankGraph::kGraphLaunch) flags |= RankGraph::kInGraph;
      if (flags & RankGraph::kPageableHtoD) lf |= RankGraph::kLaunchesPageable;
    }
    g.item_flags.push_back(flags);
  }
  st.calls += static_cast<int64_t>(g.calls.size());
  st.gpu_work += static_cast<int64_t>(g.ops.size());
  {  // the steps' launch spans: each launching call to the step window its start falls in
    std::vector<std::pair<int64_t, int64_t>> win;  // the windows' host ranges, by start
    for (const StepWindow& w : g.windows)
      win.push_back(w.annotated ? std::pair{w.cpu_begin_ns, w.cpu_end_ns} : std::pair{INT64_MIN, INT64_MAX});
    std::sort(win.begin(), win.end());
    std::vector<std::pair<int64_t, int64_t>> span(win.size(), {INT64_MAX, INT64_MIN});
    for (uint32_t c = 0; c < nc; ++c) {
      if (!(g.item_flags[c] & RankGraph::kOwnsWork)) continue;
      const int64_t s = g.item_start[c];
      auto it = std::upper_bound(win.begin(), win.end(), s, [](int64_t x, const auto& w) { return x < w.first; });
      if (it == win.begin() || s >= std::prev(it)->second) continue;
      auto& sp = span[static_cast<size_t>(std::prev(it) - win.begin())];
      sp.first = std::min(sp.first, s), sp.second = std::max(sp.second, g.item_end[c]);
    }
    for (const auto& sp : span)
      if (sp.first < sp.second) g.launch_spans.push_back(sp);
    std::vector<std::pair<int64_t, int64_t>> merged;
    for (const auto& s : g.launch_spans)
      if (!merged.empty() && s.first <= merged.back().second) merged.back().second = std::max(merged.back().second, s.second);
      else merged.push_back(s);
    g.launch_spans = std::move(merged);
  }
  auto launchOf = [&](uint32_t op_item) { return g.launch_item[op_item]; };
  // A materialized attention: its batched GEMMs and softmax kernels (the unfused-attention class),
  // and the score matrix's other kernels, up to 8 non-GEMM kernels between two of those on a stream.
  {
    constexpr size_t kMaxBetween = 8;
    std::vector<std::vector<uint32_t>> pending(tracks);
    std::vector<uint8_t> pending_gemm(tracks, 0), seen(tracks, 0);
    std::vector<uint32_t> scores_of(nc, 0);
    for (uint32_t j = nc; j < g.items(); ++j) {
      const uint32_t ev = g.ops[j - nc];
      const Event& e = t.events[ev];
      if (e.kind != EventKind::kKernel) continue;
      const uint32_t tr = e.track;
      const KernelClass k = idx.class_of_event[ev];
      if (k == KernelClass::kAttentionUnfused) {
        g.item_flags[j] |= isGemmKernelName(t.strings.view(e.name)) ? RankGraph::kAttnGemm : RankGraph::kAttnScores;
        if (seen[tr] && !pending_gemm[tr] && pending[tr].size() <= kMaxBetween)
          for (uint32_t p : pending[tr]) g.item_flags[p] |= RankGraph::kAttnScores;
        seen[tr] = 1;
        pending[tr].clear();
        pending_gemm[tr] = 0;
      } else if (seen[tr]) {
        if (isGemm(k)) pending_gemm[tr] = 1;
        if (pending[tr].size() <= kMaxBetween) pending[tr].push_back(j);
      }
    }
    for (uint32_t j = nc; j < g.items(); ++j)
      if ((g.item_flags[j] & RankGraph::kAttnScores) && g.launch_item[j] >= 0) ++scores_of[g.launch_item[j]];
    for (uint32_t c = 0; c < nc; ++c)
      if (scores_of[c] > 0 && scores_of[c] == g.work_count[c]) g.item_flags[c] |= RankGraph::kLaunchesScores;
  }
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
  // The last-ending and the first-starting piece of GPU work of each launch call.
  std::vector<int32_t> last_own_op(nc, -1), first_own_op(nc, -1);
  for (uint32_t j = nc; j < g.items(); ++j) {
    int32_t l = launchOf(j);
    if (l < 0) continue;
    if (last_own_op[l] < 0 || g.endOf(static_cast<uint32_t>(last_own_op[l])) < g.endOf(j))
      last_own_op[l] = static_cast<int32_t>(j);
    if (first_own_op[l] < 0 || g.startOf(j) < g.startOf(static_cast<uint32_t>(first_own_op[l])))
      first_own_op[l] = static_cast<int32_t>(j);
  }
  // Event waits, inferred from the host calls (Kineto records neither the stream nor the event of
  // cudaEventRecord and cudaStreamWaitEvent): a wait issued on a thread since its last launch holds
  // the thread's next launched work until the work launched last before the thread's latest event
  // record ends, where the two ran on different streams of one device and the trace agrees (the
  // waiting work started after that end). Under the profiler the host is often slower than these
  // waits, so the trace's timing alone (the unexplained starts below) cannot show them; once the
  // launches are free (CUDA graphs) they order the streams: cuDNN's LSTM runs its layers on streams
  // that wait for each other every time step.
  std::vector<std::pair<uint32_t, uint32_t>> event_waits;  // (waiting work, the work it waits for)
  {
    std::vector<uint32_t> pending;
    for (const auto& on_track : g.calls_on_track) {
      int32_t last_launch = -1, recorded = -1;
      pending.clear();
      for (uint32_t c : on_track) {
        const Event& e = t.events[g.calls[c]];
        if (e.hasRole(kRoleEventRecord)) recorded = last_launch >= 0 ? last_own_op[last_launch] : -1;
        else if (e.hasRole(kRoleStreamWait) && recorded >= 0) pending.push_back(static_cast<uint32_t>(recorded));
        if (first_own_op[c] < 0) continue;
        const uint32_t j = static_cast<uint32_t>(first_own_op[c]);
        for (uint32_t p : pending)
          if (g.trackOf(p) != g.trackOf(j) && t.tracks[g.trackOf(p)].pid == t.tracks[g.trackOf(j)].pid &&
              g.endOf(p) <= g.startOf(j) + kEventWaitToleranceNs)
            event_waits.push_back({j, p});
        pending.clear();
        last_launch = static_cast<int32_t>(c);
      }
    }
    std::sort(event_waits.begin(), event_waits.end());
    event_waits.erase(std::unique(event_waits.begin(), event_waits.end()), event_waits.end());
    st.event_waits += static_cast<int64_t>(event_waits.size());
  }
  // GPU work: launch, stream order, cross-stream waits; durations. On a thread of its own for large
  // ranks, while this one builds the host calls' edges.
  std::vector<Edge> gpu_edges;
  ReplayGraphStats gpu_st;
  auto gpuEdges = [&] {
    auto add = [&](uint32_t node, int32_t pred, uint8_t kind, int64_t c, uint32_t aux = 0) {
      gpu_edges.push_back({node, pred, c, aux, rank, kind, kAlways});
    };
    ReplayGraphStats& st = gpu_st;
    gpu_edges.reserve(3 * g.ops.size());
    std::vector<int32_t> stream_prev(tracks, -1);
    auto waits = event_waits.begin();
    for (uint32_t j = nc; j < g.items(); ++j) {  // from the items' copies: no event read
      const int64_t tj = g.startOf(j);
      for (; waits != event_waits.end() && waits->first == j; ++waits)  // held in the trace: offsets <= 0
        add(g.start(j), static_cast<int32_t>(g.end(waits->second)), kCross, std::min<int64_t>(0, tj - g.endOf(waits->second)));
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
          if (tj - ce_end > kCrossStreamScan * kUnexplainedWaitNs) break;
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
      (bind == kByLaunch ? st.bound_by_launch : bind == kByStream ? st.bound_by_stream
                                            : bind == kByCross    ? st.bound_by_cross_stream
                                                                  : st.unbound)++;
      if (!(g.item_flags[j] & RankGraph::kCollective))  // collectives end at the join
        add(g.end(j), static_cast<int32_t>(g.start(j)), kGpu, 0, j);
    }
  };
  std::thread gpu_thread;
  struct Joiner {  // joined however this function is left
    std::thread& t;
    ~Joiner() {
      if (t.joinable()) t.join();
    }
  } joiner{gpu_thread};
  if (g.ops.size() > 50000) gpu_thread = std::thread(gpuEdges);
  else gpuEdges();
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
  // up, nor did a memset or a copy between pinned or device memory: an idle GPU, as under a
  // host-bound profiler, runs them inside the call), and for a synchronizing call the work that
  // ended last before it returned.
  auto mayHoldCall = [&](const Event& op) {
    if (op.kind != EventKind::kMemcpy) return false;
    const std::string_view name = t.strings.view(op.name);
    // Kineto names the memory kinds ("Memcpy HtoD (Pageable -> Device)"); without them, any copy.
    return name.find('(') == std::string_view::npos || isPageableCopy(name);
  };
  auto awaitedBy = [&](uint32_t c) -> int32_t {
    const Event& e = g.ev(c);
    int32_t await = -1;
    if (int32_t own = last_own_op[c]; own >= 0 && mayHoldCall(g.ev(static_cast<uint32_t>(own)))) {
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
  // A launch call that lasted far longer than a launch and returned right after some GPU work ended
  // waited for a slot in a full launch queue (the host ran ahead by the queue's depth): that work.
  auto queueSlotAwaitedBy = [&](uint32_t c) -> int32_t {
    const Event& e = g.ev(c);
    if (!(g.item_flags[c] & RankGraph::kOwnsWork) || (g.item_flags[c] & RankGraph::kGraphLaunch) ||
        e.dur_ns < kQueueWaitMinNs)
      return -1;
    const int64_t p = lastEndingBy(e.end_ns() + kClockToleranceNs);
    if (p < 0) return -1;
    const uint32_t k2 = by_end[static_cast<size_t>(p)];
    return g.endOf(k2) > e.start_ns + kQueueWaitMinNs / 2 ? static_cast<int32_t>(k2) : -1;
  };
  // A host edge's events, counted once (kHostGap, kRootSpan keep them in aux, kHostSplit in its
  // splits entry); 0 for an empty span.
  auto eventCount = [&](uint32_t track, int64_t from, int64_t to) {
    return to <= from ? 0u : static_cast<uint32_t>(g.eventsIn(track, from, to));
  };
  // Host calls: thread order with the gaps kept; a call that waited for GPU work ends after it.
  for (uint32_t track = 0; track < tracks; ++track) {
    const std::vector<uint32_t>& list = g.calls_on_track[track];
    const std::vector<int64_t>* starts = nullptr;  // host events that show the thread working
    if (!g.work_starts[track].empty()) starts = &g.work_starts[track];
    const std::vector<int64_t>* steps = nullptr;
    if (!g.step_starts[track].empty()) steps = &g.step_starts[track];
    for (size_t k = 0; k < list.size(); ++k) {
      uint32_t c = list[k];
      const Event& e = g.ev(c);
      // The no-sync edit keeps the wait of the call that closes a step (the training loop's own
      // synchronize, or the profiler step's): it removes the syncs inside the step.
      bool closes_step = false;  // a thread without steps closes none
      if (steps) {
        auto next_step = std::upper_bound(steps->begin(), steps->end(), e.start_ns);
        int64_t boundary = next_step == steps->end() ? INT64_MAX : *next_step;
        closes_step = k + 1 == list.size() || g.startOf(list[k + 1]) >= boundary;
      }
      if (k == 0) {
        // A thread's first call follows the last call another thread ended before it (a thread
        // started inside the trace, autograd's backward thread), else keeps its traced time.
        int32_t from = otherThreadCallEndedBy(track, e.start_ns, INT64_MIN);
        if (from < 0) {
          const std::vector<int64_t>& hs = g.host_starts[track];
          if (!hs.empty() && hs.front() < e.start_ns)
            add(g.start(c), -1, kRootSpan, hs.front(), eventCount(track, hs.front(), e.start_ns));
          else add(g.start(c), -1, kRoot, e.start_ns);
        } else {
          add(g.start(c), static_cast<int32_t>(g.end(static_cast<uint32_t>(from))), kHostGap,
              g.endOf(static_cast<uint32_t>(from)), eventCount(track, g.endOf(static_cast<uint32_t>(from)), e.start_ns));
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
          const std::vector<int64_t>& ends = g.work_ends[track];
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
          add(g.start(c), static_cast<int32_t>(g.end(list[k - 1])), kHostGap, p.end_ns(),
              eventCount(track, p.end_ns(), e.start_ns));
        } else {
          const Event& o = g.ev(static_cast<uint32_t>(from));
          g.splits.push_back({p.end_ns(), hole_begin, wake, e.start_ns, eventCount(track, p.end_ns(), hole_begin),
                              eventCount(track, wake, e.start_ns)});
          add(g.start(c), static_cast<int32_t>(g.end(list[k - 1])), kHostSplit, 0,
              static_cast<uint32_t>(g.splits.size() - 1));
          add(g.start(c), static_cast<int32_t>(g.end(static_cast<uint32_t>(from))), kHostGap, o.end_ns(),
              eventCount(track, o.end_ns(), e.start_ns));
          ++st.thread_handoffs;
        }
      }
      const int32_t waited = awaitedBy(c);
      if (waited < 0) {
        if (const int32_t slot = queueSlotAwaitedBy(c); slot >= 0) {
          // A launch into a full queue: it returns once the GPU finishes the work that frees a slot,
          // whatever the edit (the queue's depth does not change).
          const int64_t tail = e.end_ns() - std::max(e.start_ns, g.endOf(static_cast<uint32_t>(slot)));
          add(g.end(c), static_cast<int32_t>(g.start(c)), kSyncTail, tail, 0, kAlways);
          add(g.end(c), static_cast<int32_t>(g.end(static_cast<uint32_t>(slot))), kSyncAwait, tail, 0, kAlways);
          ++st.queue_waits;
          continue;
        }
        add(g.end(c), static_cast<int32_t>(g.start(c)), kCallDur, -1, c);
        continue;
      }
      // Waiting (always for the step's closing call, else unless the no-sync edit drops it).
      // A copy's wait: the call launched a copy from pageable memory, or the call before it on its
      // thread did, inside the same top-level operator (aten::to: cudaMemcpyAsync, then
      // cudaStreamSynchronize).
      bool copy = g.item_flags[c] & RankGraph::kLaunchesPageable;
      if (!copy && k > 0 && (g.item_flags[list[k - 1]] & RankGraph::kLaunchesPageable)) {
        const auto& ops = host_ops[track];
        auto op = std::upper_bound(ops.begin(), ops.end(), std::pair{e.start_ns, INT64_MAX});
        copy = op != ops.begin() && (--op)->first <= g.startOf(list[k - 1]) && e.end_ns() <= op->second;
      }
      const uint8_t cond = closes_step ? kAlways : copy ? kIfCopyWaits : kIfWaits;
      int64_t we = g.endOf(static_cast<uint32_t>(waited));
      int64_t tail = e.end_ns() - std::max(e.start_ns, we);
      add(g.end(c), static_cast<int32_t>(g.start(c)), kSyncTail, tail, 0, cond);
      add(g.end(c), static_cast<int32_t>(g.end(static_cast<uint32_t>(waited))), kSyncAwait, tail, 0, cond);
      if (we > e.start_ns) ++st.sync_waits;
      if (!closes_step)  // the wait dropped: what the call took besides waiting
        add(g.end(c), static_cast<int32_t>(g.start(c)), kCallDur,
            std::max<int64_t>(0, std::min(e.end_ns(), we) - e.start_ns), c, copy ? kIfNoCopyWaits : kIfNoWaits);
    }
  }
  if (gpu_thread.joinable()) gpu_thread.join();
  parts.push_back(std::move(host_edges));
  parts.push_back(std::move(gpu_edges));
  std::vector<int32_t>().swap(g.item_of);  // only the build looks events up
  stats.bound_by_launch += gpu_st.bound_by_launch;
  stats.bound_by_stream += gpu_st.bound_by_stream;
  stats.bound_by_cross_stream += gpu_st.bound_by_cross_stream;
  stats.unbound += gpu_st.unbound;
}

// Orders the edges by their nodes' place in a dependency order (Kahn) into `edges`; false, with
// the reason set, on a cycle or too many edges.
bool ReplayModel::Impl::order() {
  size_t total = 0;
  for (const auto& p : parts) total += p.size();
  if (total >= UINT32_MAX) {
    reason = "too many dependencies to replay (over 4 billion)";
    return false;
  }
  std::vector<uint32_t> indeg(nodes, 0), first(nodes + 1, 0);
  for (const auto& p : parts)
    for (const Edge& e : p)
      if (e.pred >= 0) ++indeg[e.node], ++first[static_cast<uint32_t>(e.pred) + 1];
  for (uint32_t n = 0; n < nodes; ++n) first[n + 1] += first[n];
  std::vector<uint32_t> succ(first[nodes]);
  {
    std::vector<uint32_t> fill(first.begin(), first.end() - 1);
    for (const auto& p : parts)
      for (const Edge& e : p)
        if (e.pred >= 0) succ[fill[static_cast<uint32_t>(e.pred)]++] = e.node;
  }
  std::vector<uint32_t> queue;
  queue.reserve(nodes);
  for (uint32_t n = 0; n < nodes; ++n)
    if (indeg[n] == 0) queue.push_back(n);
  for (size_t q = 0; q < queue.size(); ++q) {
    uint32_t n = queue[q];
    for (uint32_t k = first[n]; k < first[n + 1]; ++k)
      if (--indeg[succ[k]] == 0) queue.push_back(succ[k]);
  }
  if (queue.size() != nodes) {
    reason = "the trace's dependencies form a cycle (host and GPU clocks disagree): replay unavailable";
    return false;
  }
  std::vector<uint32_t>().swap(succ);
  std::vector<uint32_t>().swap(indeg);
  std::vector<uint32_t>().swap(first);
  // Edges grouped by node, nodes in dependency order (a counting sort into one array; each part is
  // freed once placed).
  std::vector<uint32_t> pos(nodes);
  for (uint32_t q = 0; q < nodes; ++q) pos[queue[q]] = q;
  std::vector<uint32_t>().swap(queue);
  std::vector<uint32_t> at(nodes + 1, 0);
  for (const auto& p : parts)
    for (const Edge& e : p) ++at[pos[e.node] + 1];
  for (uint32_t n = 0; n < nodes; ++n) at[n + 1] += at[n];
  edges.resize(total);
  for (auto& p : parts) {
    for (const Edge& e : p) edges[at[pos[e.node]]++] = e;
    std::vector<Edge>().swap(p);
  }
  parts.clear();
  first_edge.assign(nodes, UINT32_MAX);
  for (uint32_t k = static_cast<uint32_t>(edges.size()); k-- > 0;) first_edge[edges[k].node] = k;
  return true;
}

ReplayModel::ReplayModel(const RunAnalysis& run) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  if (run.ranks.size() > UINT16_MAX) {
    m.reason = "too many ranks to replay in one graph (over 65,535)";
    return;
  }
  m.graphs.resize(run.ranks.size());
  for (size_t r = 0; r < run.ranks.size(); ++r) {
    RankGraph& g = m.graphs[r];
    g.ra = &run.ranks[r];
    g.index = static_cast<uint16_t>(r);
    g.windows = g.ra->windows;
    if (g.windows.size() > kReplayMaxSteps + 1 && g.windows[kReplayMaxSteps].annotated) {
      g.host_cut = g.windows[kReplayMaxSteps].cpu_end_ns;
      g.windows = g.windows.first(kReplayMaxSteps);
    }
    g.base = m.nodes;
    m.buildRank(static_cast<uint16_t>(r), g);
    if (static_cast<uint64_t>(m.nodes) + 2ull * g.items() > static_cast<uint64_t>(INT32_MAX)) {
      m.reason = "too many events to replay (over 1 billion calls and GPU operations)";
      return;
    }
    m.nodes += 2 * g.items();
  }
  // What the replay cannot model gets no number: GPU work without its launches (PyTorch 1.x traces,
  // CUDA-only activities), or a step that outlives the profiler's record window.
  for (const RankGraph& g : m.graphs) {
    const RankTrace& t = *g.ra->trace;
    int64_t linked = 0;
    for (uint32_t k = 0; k < g.ops.size(); ++k) linked += g.launch_item[g.calls.size() + k] >= 0;
    if (!g.ops.empty() && linked * 2 < static_cast<int64_t>(g.ops.size())) {  // real traces: 84-100 %
      m.reason = fmt::format("rank {}: only {:.0f}% of the GPU work links to a recorded launch call (the trace lacks "
                             "runtime events or correlation ids): replay unavailable",
                             t.rank, 100.0 * static_cast<double>(linked) / static_cast<double>(g.ops.size()));
      return;
    }
    int64_t recorded_end = INT64_MIN;
    for (const Event& e : t.events)
      if (!e.hasRole(kRoleStep) && e.kind != EventKind::kGpuRange) recorded_end = std::max(recorded_end, e.end_ns());
    for (const StepWindow& w : g.windows)  // more of the step unrecorded than recorded
      if (w.annotated && w.cpu_end_ns - recorded_end > std::max<int64_t>(kClockToleranceNs, recorded_end - w.cpu_begin_ns)) {
        m.reason = fmt::format("rank {}: step {} ends {:.3f} ms after the last recorded event (cut by the profiler's "
                               "record window): replay unavailable",
                               t.rank, w.number, static_cast<double>(w.cpu_end_ns - recorded_end) / 1e6);
        return;
      }
  }
  // Collectives joined across ranks: member j ends at f_j + x + max_j'(shift_j' - u_j'), with x
  // the shortest member's duration (the transfer; the others also waited), shift = replayed -
  // traced start. Unedited, that is f_j; it needs no common clock between ranks.
  std::vector<Edge> joined;
  std::map<std::pair<std::string_view, int64_t>, std::vector<std::pair<uint32_t, uint32_t>>> groups;
  for (uint32_t r = 0; r < m.graphs.size(); ++r) {
    const RankGraph& g = m.graphs[r];
    const RankTrace& t = *g.ra->trace;
    for (uint32_t k = 0; k < g.ops.size(); ++k) {
      const Event& e = t.events[g.ops[k]];
      if (!e.collective) continue;
      const Collective& c = t.collectives[e.collective - 1];
      uint32_t item = static_cast<uint32_t>(g.calls.size()) + k;
      if (c.process_group == 0 || c.seq < 0) {  // cannot be joined: its own duration
        joined.push_back({g.end(item), static_cast<int32_t>(g.start(item)), 0, item, static_cast<uint16_t>(r), kGpu, kAlways});
        continue;
      }
      groups[{t.strings.view(c.process_group), c.seq}].push_back({r, item});
    }
  }
  for (const auto& [key, members] : groups) {
    int64_t x = INT64_MAX;
    for (auto [r, item] : members) x = std::min(x, m.graphs[r].ev(item).dur_ns);
    m.stats.collective_groups += members.size() > 1;
    for (auto [r, item] : members) {
      const RankGraph& g = m.graphs[r];
      const Event& e = g.ev(item);
      m.joins.push_back({x, item});
      for (auto [r2, item2] : members) {
        const Event& e2 = m.graphs[r2].ev(item2);
        joined.push_back({g.end(item), static_cast<int32_t>(m.graphs[r2].start(item2)), e.end_ns() - e2.start_ns - e2.dur_ns,
                           static_cast<uint32_t>(m.joins.size() - 1), static_cast<uint16_t>(r), kJoin, kAlways});
      }
    }
  }
  m.parts.push_back(std::move(joined));
  // A cycle means the trace's clocks contradict its dependencies, and no number is better than a
  // wrong one.
  m.order();
}

ReplayModel::~ReplayModel() = default;

namespace {

// Where a host time on a thread lands in the replay: shifted with the call before it (gaps keep
// their length). The node it follows (-1: none, the time itself) and the host time after it.
struct HostPoint {
  int64_t value;
  int64_t node;
  int64_t after;  // host time after the node's value
};

HostPoint mapHost(const RankGraph& g, const std::vector<int64_t>& value, uint32_t track, int64_t t, const ReplayEdits& ed) {
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


// The GPU side of each step window: the work launched from the step's host range (to the next
// step's start; the last step, or one a gap follows, to its own end; an unannotated window: all of
// it), traced (side 0) and replayed (side 1).
struct GpuStep {
  struct Side {
    int64_t end_ns = kUnset;               // the last end of that work
    // The GPU's own time for that work on its busiest stream: the work and the gaps before it that the
    // GPU, not the host, made (the work was launched already), collectives left out.
    int64_t queued_ns = 0;
    int64_t busy_ns = 0;                   // the busiest stream's work, collectives left out
    std::array<int64_t, 3> busy_parts{};   // ... as compute, communication (0), copies
  };
  std::array<Side, 2> side;
};

std::vector<GpuStep> gpuSteps(const RankGraph& g, const std::vector<int64_t>& value, std::span<const StepWindow> windows) {
  const size_t n = windows.size();
  std::vector<GpuStep> out(n);
  if (n == 0) return out;
  // Launch ranges, sorted by begin (the windows are).
  std::vector<std::pair<int64_t, int64_t>> range(n);
  for (size_t k = 0; k < n; ++k) {
    const StepWindow& w = windows[k];
    if (!w.annotated) range[k] = {INT64_MIN, INT64_MAX};
    else if (k + 1 < n && windows[k + 1].begin_ns == w.end_ns) range[k] = {w.cpu_begin_ns, windows[k + 1].cpu_begin_ns};
    else range[k] = {w.cpu_begin_ns, w.cpu_end_ns};
  }
  const size_t tracks = g.calls_on_track.size();
  uint32_t max_track = 0;
  for (uint32_t j = 0; j < g.ops.size(); ++j) max_track = std::max(max_track, g.trackOf(static_cast<uint32_t>(g.calls.size()) + j));
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
      if (prev != kUnset && launch_at[side] != kUnset) gaps[side] = std::max<int64_t>(0, spans[side][0] - std::max(prev, launch_at[side]));
      prev = std::max(prev, spans[side][1]);
    }
    auto it = std::upper_bound(range.begin(), range.end(), launched,
                               [](int64_t v, const std::pair<int64_t, int64_t>& r) { return v < r.first; });
    if (it == range.begin()) continue;
    const size_t k = static_cast<size_t>(it - range.begin()) - 1;
    if (launched >= range[k].second) continue;
    const size_t part = static_cast<size_t>(gpuCategory(g.ev(item))) == static_cast<size_t>(PathCategory::kCompute) ? 0
                        : gpuCategory(g.ev(item)) == PathCategory::kCommunication                           ? 1
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


// The k-th step of every rank: sums over ranks of its timing and of its host critical path.
struct StepRow {
  double ranks = 0;
  StepTiming traced, replayed;
  std::array<double, kPathCategoryCount> path{};
};

// The host sets the step's make-up where its period is at least this share of the GPU's.
constexpr double kHostSetsShare = 0.9;

// The steps' means over ranks, the steady-state step traced and replayed, and what makes up the
// replayed one: the host's critical path where the host sets it (the middle steps by host time),
// else the busiest stream's work by kind and its idle gaps.
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
      double sum = 0;
      for (double p : out.path_ns) sum += p;
      out.path_ns[static_cast<size_t>(PathCategory::kInput)] += std::max(0.0, out.replayed.period_ns - sum);
    }
  } else if (out.replayed.bound == StepBound::kLoader) {
    out.path_ns[static_cast<size_t>(PathCategory::kInput)] = out.replayed.period_ns;
  } else {
    const auto& p = out.replayed.busy_parts;
    out.path_ns[static_cast<size_t>(PathCategory::kCompute)] = p[0];
    out.path_ns[static_cast<size_t>(PathCategory::kCommunication)] = p[1];
    out.path_ns[static_cast<size_t>(PathCategory::kCopies)] = p[2];
    out.path_ns[static_cast<size_t>(PathCategory::kOtherIdle)] = std::max(0.0, out.replayed.period_ns - out.replayed.busy_ns);
  }
  out.leading = PathCategory::kCompute;
  for (size_t c = 0; c < kPathCategoryCount; ++c)
    if (out.path_ns[c] > out.path_ns[static_cast<size_t>(out.leading)]) out.leading = static_cast<PathCategory>(c);
}

}  // namespace

Replay ReplayModel::Impl::evaluate(const ReplayEdits& ed) const {
  Replay out;
  out.stats = stats;
  if (!reason.empty()) {
    out.reason = reason;
    return out;
  }
  // Longest paths in dependency order: the edges are grouped by node in that order.
  std::vector<int64_t> value(nodes, kUnset);
  const bool copies_wait = !(ed.drop_sync_waits || ed.drop_copy_waits);
  auto holds = [&](const Edge& e) {
    switch (e.cond) {
      case kIfWaits: return !ed.drop_sync_waits;
      case kIfNoWaits: return ed.drop_sync_waits;
      case kIfCopyWaits: return copies_wait;
      case kIfNoCopyWaits: return !copies_wait;
      default: return true;
    }
  };
  for (const Edge& e : edges) {
    if (!holds(e)) continue;
    int64_t base;
    if (e.pred < 0) base = 0;
    else if ((base = value[static_cast<uint32_t>(e.pred)]) == kUnset) continue;
    const int64_t v = base + offsetOf(e, ed);
    if (v > value[e.node]) value[e.node] = v;
  }
  // The edge that set a node's value (the first that reaches it), looked up only along the
  // critical path; UINT32_MAX for none.
  auto fromOf = [&](int64_t node) -> uint32_t {
    for (uint32_t k = first_edge[static_cast<size_t>(node)]; k < edges.size() && edges[k].node == node; ++k) {
      const Edge& e = edges[k];
      if (!holds(e)) continue;
      int64_t base = e.pred < 0 ? 0 : value[static_cast<uint32_t>(e.pred)];
      if (base != kUnset && base + offsetOf(e, ed) == value[static_cast<size_t>(node)]) return k;
    }
    return UINT32_MAX;
  };
  // The critical path of [begin, end]: from the node that ends it back to the window's begin.
  auto walk = [&](int64_t node, int64_t after, int64_t begin, std::array<double, kPathCategoryCount>& acc) {
    acc[static_cast<size_t>(PathCategory::kHostLaunch)] += static_cast<double>(after);
    while (node >= 0 && value[static_cast<size_t>(node)] > begin) {
      uint32_t k = fromOf(node);
      if (k == UINT32_MAX) break;
      const Edge& e = edges[k];
      int64_t lo = e.pred < 0 ? begin : std::max(begin, value[static_cast<uint32_t>(e.pred)]);
      double part = static_cast<double>(value[static_cast<size_t>(node)] - lo);
      PathCategory cat = categoryOf(e);
      if ((e.kind == kHostGap || e.kind == kHostSplit) && !ed.loader_off_thread) {  // the loader's share: input
        const RankGraph& g = graphs[e.rank];
        uint32_t item = g.itemOfNode(e.node);
        uint32_t track = g.trackOf(item);
        int64_t raw = 0, in = 0;
        if (e.kind == kHostGap) {
          raw = g.startOf(item) - e.c, in = g.loaderOverlap(track, e.c, g.startOf(item));
        } else {
          const auto& sp = g.splits[e.aux];
          raw = sp[1] - sp[0] + sp[3] - sp[2];
          in = g.loaderOverlap(track, sp[0], sp[1]) + g.loaderOverlap(track, sp[2], sp[3]);
        }
        // Graphed, what stays of the gap is the loader's (at most its traced time), the optimizer's
        // where it stays eager, and the graphed calls' own cost.
        double input = raw > 0 ? std::min(part, ed.free_launches ? static_cast<double>(in)
                                                                 : part * static_cast<double>(in) / static_cast<double>(raw))
                               : 0;
        acc[static_cast<size_t>(PathCategory::kInput)] += input;
        part -= input;
      }
      acc[static_cast<size_t>(cat)] += part;
      node = e.pred;
    }
    // What precedes the first node (a root before the window's begin): idle.
    if (node >= 0 && value[static_cast<size_t>(node)] > begin)
      acc[static_cast<size_t>(PathCategory::kOtherIdle)] += static_cast<double>(value[static_cast<size_t>(node)] - begin);
  };
  // Step windows, traced and replayed; per window position (the k-th step of each rank), the sums
  // over ranks of each step's timing (steady_state.h) and of its host critical path.
  std::vector<StepRow> rows;
  for (const RankGraph& g : graphs) {
    const RankAnalysis& ra = *g.ra;
    const RankTrace& t = *ra.trace;
    RankReplay rr;
    rr.rank = t.rank;
    out.windows_replayed = std::max(out.windows_replayed, g.windows.size());
    out.windows_total = std::max(out.windows_total, ra.windows.size());
    uint32_t step_track = 0;
    int64_t last_begin = kUnset;
    for (uint32_t s : ra.index.step_annotations)
      if (t.events[s].start_ns > last_begin) last_begin = t.events[s].start_ns, step_track = t.events[s].track;
    // The window after the last one replayed (if any) bounds its launch range.
    const std::vector<GpuStep> gpu =
        gpuSteps(g, value, std::span(ra.windows).first(std::min(ra.windows.size(), g.windows.size() + 1)));
    for (size_t k = 0; k < g.windows.size(); ++k) {
      const StepWindow& w = g.windows[k];
      int64_t rb, re, traced_host;
      HostPoint end{kUnset, -1, 0};
      if (!w.annotated) {  // the span of all GPU work
        rb = INT64_MAX, re = INT64_MIN;
        for (uint32_t j = 0; j < g.ops.size(); ++j) {
          uint32_t item = static_cast<uint32_t>(g.calls.size()) + j;
          rb = std::min(rb, value[g.start(item)]);
          if (value[g.end(item)] > re) re = value[g.end(item)], end = {re, g.end(item), 0};
        }
        traced_host = w.length();
      } else {
        // The host's step: to the next step's start, or (the last step, or one a gap follows) to its own end.
        const bool to_next = k + 1 < ra.windows.size() && ra.windows[k + 1].begin_ns == w.end_ns;
        rb = mapHost(g, value, step_track, w.begin_ns, ed).value;
        end = mapHost(g, value, step_track, to_next ? w.end_ns : w.cpu_end_ns, ed);
        re = end.value;
        traced_host = (to_next ? w.end_ns : w.cpu_end_ns) - w.begin_ns;
      }
      ReplayedWindow x{w.number, traced_host, re - rb};
      if (rows.size() <= k) rows.resize(k + 1);
      StepRow& row = rows[k];
      row.ranks += 1;
      row.traced.host_ns += static_cast<double>(x.traced_ns);
      row.replayed.host_ns += static_cast<double>(x.replayed_ns);
      for (int side = 0; side < 2; ++side) {
        const GpuStep::Side& gs = gpu[k].side[side];
        StepTiming& st = side ? row.replayed : row.traced;
        st.busy_ns += static_cast<double>(gs.busy_ns);
        for (size_t c = 0; c < 3; ++c) st.busy_parts[c] += static_cast<double>(gs.busy_parts[c]);
        // The GPU's own time for the step (GpuStep::Side::queued_ns).
        if (gs.end_ns != kUnset)
          st.gpu_period_ns = std::max(0.0, st.gpu_period_ns) + static_cast<double>(gs.queued_ns);
        else if (!w.annotated)
          st.gpu_period_ns = std::max(0.0, st.gpu_period_ns) + static_cast<double>(side ? re - rb : traced_host);
      }
      if (x.traced_ns > 0)
        out.worst_error = std::max(out.worst_error, std::abs(static_cast<double>(x.replayed_ns - x.traced_ns)) /
                                                        static_cast<double>(x.traced_ns));
      walk(end.node, end.after, rb, row.path);
      rr.windows.push_back(x);
    }
    out.ranks.push_back(std::move(rr));
  }
  finishSteps(rows, ed, out);
  out.available = true;
  return out;
}

Replay ReplayModel::replay(const ReplayEdits& edits) const { return impl_->evaluate(edits); }

std::vector<int64_t> ReplayModel::hostGapP25() const {
  std::vector<int64_t> v;
  for (const RankGraph& g : impl_->graphs) v.push_back(g.host_gap_p25);
  return v;
}

std::vector<int64_t> ReplayModel::launchCallP50() const {  // on demand: the committed gauge is hostGapP25
  std::vector<int64_t> v;
  for (const RankGraph& g : impl_->graphs) {
    const RankTrace& t = *g.ra->trace;
    const uint32_t nc = static_cast<uint32_t>(g.calls.size());
    std::vector<int64_t> d;  // the calls that launch one kernel and neither wait nor replay a graph
    for (uint32_t k = 0; k < g.ops.size(); ++k) {
      const int32_t c = g.launch_item[nc + k];
      if (c < 0 || t.events[g.ops[k]].kind != EventKind::kKernel) continue;
      const uint32_t cu = static_cast<uint32_t>(c);
      if (g.work_count[cu] == 1 && !(g.item_flags[cu] & (RankGraph::kSyncRole | RankGraph::kGraphLaunch)))
        d.push_back(g.item_end[cu] - g.item_start[cu]);
    }
    v.push_back(gaugeQuantile(d, 1, 2));
  }
  return v;
}

LoaderPool ReplayModel::loaderPool() const {
  LoaderPool p;
  double ranks = 0;
  for (const RankGraph& g : impl_->graphs) {
    const auto& ws = g.ra->windows;
    std::vector<double> wait, host;
    for (size_t k = 0; k < g.windows.size(); ++k) {
      const StepWindow& w = ws[k];
      if (!w.annotated) continue;
      const int64_t end = k + 1 < ws.size() && ws[k + 1].begin_ns == w.end_ns ? w.end_ns : w.cpu_end_ns;
      double wt = 0;
      for (const auto& v : g.loader_wait) wt += static_cast<double>(RankGraph::overlap(v, w.begin_ns, end));
      wait.push_back(wt), host.push_back(static_cast<double>(end - w.begin_ns));
    }
    if (host.empty()) continue;
    ranks += 1;
    p.wait_per_step_ns += medianOf(std::move(wait));
    p.host_step_ns += medianOf(std::move(host));
    p.handoff_ns = std::max(p.handoff_ns, static_cast<double>(g.loader_handoff_ns));
    for (const auto& v : g.loader_wait) p.multiprocess |= !v.empty();
  }
  if (ranks > 0) p.wait_per_step_ns /= ranks, p.host_step_ns /= ranks;
  return p;
}

std::vector<Replay> ReplayModel::replayAll(const std::vector<ReplayEdits>& edits, unsigned threads) const {
  std::vector<Replay> out(edits.size());
  if (threads == 0) threads = std::min(4u, std::max(1u, std::thread::hardware_concurrency()));
  threads = static_cast<unsigned>(std::min<size_t>(threads, edits.size()));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < edits.size(); i = next++) out[i] = replay(edits[i]);
  };
  std::vector<std::thread> pool;
  for (unsigned k = 1; k < threads; ++k) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  return out;
}

Replay replayRun(const RunAnalysis& run, const ReplayEdits& edits) { return ReplayModel(run).replay(edits); }

std::string_view categoryGroup(std::string_view c) {
  if (c == "compute" || c == "communication" || c == "copies") return c;
  return "host";
}

std::string_view pathCategoryName(PathCategory c) {
  static constexpr std::string_view kNames[] = {"compute", "communication", "host_launch", "input",
                                                "sync",    "copies",        "other_idle"};
  return kNames[static_cast<size_t>(c)];
}

}  // namespace gpudoctor
