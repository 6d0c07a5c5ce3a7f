// The replay's graph (internal to analysis/replay/): edges and their kinds, one rank's items and the
// host-side lookups the edits read (RankGraph), the model's state (ReplayModel::Impl) and the
// builder of one rank's graph (RankBuilder). The public interface is analysis/replay/replay.h.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "analysis/precision_kinds.h"
#include "analysis/replay/replay.h"

namespace gpudoctor {
namespace replay_detail {

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
// Ends further back than kCrossStreamScan x kUnexplainedWaitNs are not looked at, unless the start is
// unexplained by this much: a stream that idled that long after its own last work waited for another
// stream's (the last work that ended before it, if any ended after its stream's), not for a fixed
// time. Kept as a stream gap, it would stay in every edited replay whatever the rest of the GPU's work
// became (cuDNN's LSTM: streams that run once a step wait 35 ms each, 70-180 us after the GPU's last end).
constexpr int64_t kLongStreamIdleNs = 1000000;
// An inferred event wait whose waiting work started more than this before the awaited work ended
// in the trace is not one (the GPU's timestamps are one clock).
constexpr int64_t kEventWaitToleranceNs = 500;
// A host thread idle this long between two calls, with no host event recorded meanwhile, is taken
// to wait for the call of another thread that ended last before it resumed.
constexpr int64_t kHandoffIdleNs = 20000;
// A launch call this long waited for something: a launch costs 2-20 us even under the profiler.
constexpr int64_t kQueueWaitMinNs = 200000;
// ... and one longer than a launch (kQueueWaitShortMinNs) made while the launch queue was full: as
// much work launched and not yet started as the trace's launches see at their 95th percentile (within
// kQueueFullShare), once that is a queue's worth (kQueueFullMinPending). On a GPU-bound host that fills
// the queue every launch waits for a slot, most for one short kernel, 20-200 us each: resnext50_fp32 on
// an H100 spent 12-15 ms a step in them at 1,131-1,136 pieces of work pending (the queue's depth there),
// against 0.3 ms in its first step, before the queue filled. Kept as host time, they held the host at
// the GPU's old pace in every edit that shortens the GPU's work.
constexpr int64_t kQueueWaitShortMinNs = 20000;
constexpr double kQueueFullShare = 0.9;
constexpr int64_t kQueueFullMinPending = 256;

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
// A sync inside a per-expert MoE loop holds its wait unless either the no-sync or the grouped
// dispatch edit drops it (kIfMoeWaits, kIfNoMoeWaits).
enum EdgeCond : uint8_t { kAlways, kIfWaits, kIfNoWaits, kIfCopyWaits, kIfNoCopyWaits, kIfMoeWaits, kIfNoMoeWaits };

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

// A per-expert MoE loop on a thread (analysis/moe_dispatch.h) and its experts' blocks.
struct MoeRange {
  int64_t begin, end;
  int experts;
};

inline int64_t scaled(int64_t ns, double s) { return s == 1.0 ? ns : static_cast<int64_t>(std::llround(ns * s)); }
// How many of the sorted times `v` fall in [from, to).
inline int64_t countIn(const std::vector<int64_t>& v, int64_t from, int64_t to) {
  return std::lower_bound(v.begin(), v.end(), to) - std::lower_bound(v.begin(), v.end(), from);
}

struct RankGraph {
  const RankAnalysis* ra = nullptr;
  // The step windows replayed: the first kReplayMaxSteps of the rank's (all of them in a trace of
  // that many or fewer), and the host time from which nothing is replayed: the end of the window
  // after the last one replayed (its calls stay, so the last step replayed has the launches that
  // follow it), or none.
  std::span<const StepWindow> windows;
  int64_t host_cut = INT64_MAX;
  uint16_t index = 0;                // into RunAnalysis::ranks
  uint32_t base = 0;                 // node id of item 0's start
  std::vector<uint32_t> calls, ops;  // event index per item: calls are items [0, calls), ops follow
  std::vector<int32_t> item_of;      // event -> item, -1
  // Per track (index into RankTrace::tracks): a rank has tens of tracks, so plain vectors.
  std::vector<std::vector<uint32_t>> calls_on_track;  // call items in start order
  std::vector<std::vector<int64_t>> host_starts;      // recorded host events' starts per thread
  std::vector<std::vector<int64_t>> host_ends;        // ... and their ends, in the same order
  // The same without Python frames (with_stack): what shows a thread working rather than waiting;
  // a frame such as Tensor.backward spans the wait for autograd's thread.
  std::vector<std::vector<int64_t>> work_starts, work_ends;
  std::vector<std::vector<std::pair<int64_t, int64_t>>> loader;       // in-process loader ranges per thread
  std::vector<std::vector<std::pair<int64_t, int64_t>>> loader_wait;  // multi-process fetches per thread
  int64_t loader_handoff_ns = 0;                                      // the shortest multi-process fetch
  std::vector<std::vector<std::pair<int64_t, int64_t>>> own_work;     // the host's own work per thread (host_work.h)
  std::vector<std::vector<std::pair<int64_t, int64_t>>> recompute;    // forward ops re-run in backward, per thread
  // Per thread: the host time between a materialized attention's two batched GEMM operators (forward,
  // and their backward nodes), where the operators launch only score-matrix kernels (softmax, masking,
  // scaling, dropout, casts) or nothing (views): a fused kernel replaces that host work too.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> score_regions;
  std::vector<std::vector<std::pair<int64_t, int64_t>>> ckpt_wrapper;  // the checkpoint wrapper's host work, per thread
  std::vector<std::vector<MoeRange>> moe;                              // per-expert MoE loops per thread, sorted
  // What a CUDA graph of the step can capture, on the host timeline: per step, from its first call
  // that launches GPU work to its last one's end (any thread). Host work outside (logging, metrics,
  // Python between steps) stays eager when the step is graphed.
  std::vector<std::pair<int64_t, int64_t>> launch_spans;
  // Autograd's AccumulateGrad nodes' starts per thread: one per parameter per backward pass.
  std::vector<std::vector<int64_t>> accum_grad;
  // Per thread, sorted: the loss's host work around each backward pass, which a model graphed alone
  // leaves eager: from the last loss operator (aten::*loss*, *cross_entropy*) to the first backward
  // node (the scale multiply, the division for accumulation, backward()'s call), and from that node to
  // the end of the loss's backward node (its LogSoftmax node after it).
  std::vector<std::vector<std::pair<int64_t, int64_t>>> loss_regions;
  double ckpt_blocks_per_ns = 0;  // checkpointed blocks per ns of the wrapper regions' host time
  int64_t host_gap_p25 = 0;       // ReplayModel::hostGapP25
  bool options_in_gaps = false;   // ReplayModel::profilerOptionsInGaps
  // Where autocast would cast (RankAnalysis::autocast_casts), per thread: the sites' times and the
  // casts before each (cast_cum[k]: the casts of the sites before the k-th; one more entry).
  std::vector<std::vector<int64_t>> cast_at;
  std::vector<std::vector<double>> cast_cum;
  // Dense embedding backward operators' starts per thread (RankAnalysis::embedding.dense_sites).
  std::vector<std::vector<int64_t>> embed_bwd_at;
  double castsIn(uint32_t track, int64_t from, int64_t to) const {
    const auto& v = cast_at[track];
    const size_t a = std::lower_bound(v.begin(), v.end(), from) - v.begin(),
                 b = std::lower_bound(v.begin(), v.end(), to) - v.begin();
    return cast_cum[track][b] - cast_cum[track][a];
  }
  std::vector<std::vector<int64_t>> step_starts;  // step ranges' starts per thread
  std::vector<std::vector<OptRegion>> opt;        // optimizer steps' operators per thread
  // kHostSplit spans: [0, 1) and [2, 3), and the recorded host events starting in each (4, 5)
  std::vector<std::array<int64_t, 6>> splits;
  std::vector<int64_t> item_start, item_end;  // copies of the items' times (the events are 64 B each: far apart)
  std::vector<uint32_t> item_track;
  std::vector<int32_t> launch_item;  // per GPU-work item: its launch call's item, -1
  // Per item. Calls: kOwnsWork, kSyncRole, kGraphLaunch, kLaunchesScores (launches only the score
  // matrix's kernels of a materialized attention); both: kInOptimizer, kInRecompute; GPU work:
  // kInGraph, kCollective, kAttnGemm, kAttnScores, kPageableHtoD, kAttnFusedFp32; calls again:
  // kAttrQuery (cudaFuncGetAttributes), kLaunchesPageable (a host-to-device copy from pageable memory);
  // both again: kInMoe (inside a per-expert MoE loop, or launched there); GPU work again: kEmbedFill
  // (the zero fill of a dense embedding gradient).
  std::vector<uint16_t> item_flags;
  std::vector<PrecisionKind> work_kind;  // per GPU-work item (index: item - calls.size()): its PrecisionKind
  static constexpr uint16_t kOwnsWork = 1, kInOptimizer = 2, kSyncRole = 4, kGraphLaunch = 8, kInGraph = 16,
                            kCollective = 32, kAttnGemm = 64, kAttnScores = 128, kLaunchesScores = 256,
                            kPageableHtoD = 512, kInRecompute = 1024, kAttnFusedFp32 = 2048, kAttrQuery = 4096,
                            kLaunchesPageable = 8192, kInMoe = 16384, kEmbedFill = 32768;
  std::vector<uint32_t> work_count;  // per call: the GPU work it launched
  // The part of [from, to) inside the thread's loader ranges.
  int64_t loaderOverlap(uint32_t track, int64_t from, int64_t to) const { return overlap(loader[track], from, to); }
  // The part of [from, to) inside sorted, disjoint ranges.
  static int64_t overlap(const std::vector<std::pair<int64_t, int64_t>>& v, int64_t from, int64_t to) {
    int64_t in = 0;
    forEachClipped(v, from, to, [&](int64_t b, int64_t e) { in += e - b; });
    return in;
  }
  // Calls fn(b, e) with each of the sorted, disjoint ranges `v` that meets [from, to), clipped to it.
  template <class Fn>
  static void forEachClipped(const std::vector<std::pair<int64_t, int64_t>>& v, int64_t from, int64_t to, Fn&& fn) {
    auto it = std::upper_bound(v.begin(), v.end(), std::make_pair(from, INT64_MAX));
    if (it != v.begin()) --it;
    for (; it != v.end() && it->first < to; ++it)
      if (it->second > from) fn(std::max(it->first, from), std::min(it->second, to));
  }
  // Whether one of the sorted, disjoint ranges `v` holds t.
  static bool holds(const std::vector<std::pair<int64_t, int64_t>>& v, int64_t t) {
    auto it = std::upper_bound(v.begin(), v.end(), std::make_pair(t, INT64_MAX));
    return it != v.begin() && t < std::prev(it)->second;
  }
  // What [from, to) loses when the multi-process fetches in it stop waiting: each fetch keeps the
  // hand-off of a ready batch (the shortest fetch), the rest of its overlap goes.
  int64_t loaderWaitCut(uint32_t track, int64_t from, int64_t to) const {
    const auto& v = loader_wait[track];
    auto it = std::upper_bound(v.begin(), v.end(), std::make_pair(from, INT64_MAX));
    if (it != v.begin()) --it;
    int64_t cut = 0;
    for (; it != v.end() && it->first < to; ++it) {
      const int64_t len = it->second - it->first,
                    in = std::max<int64_t>(0, std::min(it->second, to) - std::max(it->first, from));
      if (len > loader_handoff_ns && in > 0)
        cut += static_cast<int64_t>(static_cast<double>(in) * static_cast<double>(len - loader_handoff_ns) /
                                    static_cast<double>(len));
    }
    return cut;
  }
  // The part of [from, to) inside the thread's optimizer steps' operators.
  int64_t optOverlap(uint32_t track, int64_t from, int64_t to) const {
    const auto& v = opt[track];  // sorted by begin, disjoint: from the last one starting before `from`
    auto it = std::upper_bound(v.begin(), v.end(), from, [](int64_t x, const OptRegion& r) { return x < r.begin; });
    if (it != v.begin()) --it;
    int64_t in = 0;
    for (; it != v.end() && it->begin < to; ++it)
      in += std::max<int64_t>(0, std::min(it->end, to) - std::max(it->begin, from));
    return in;
  }
  // The region of sorted, disjoint ones (begin, end members) holding t, or null.
  template <class Region>
  static const Region* regionAt(const std::vector<Region>& v, int64_t t) {
    auto it = std::upper_bound(v.begin(), v.end(), t, [](int64_t x, const Region& r) { return x < r.begin; });
    if (it == v.begin()) return nullptr;
    --it;
    return t < it->end ? &*it : nullptr;
  }
  // The part of [from, to) a span loses when each region of sorted, disjoint ones keeps kept(region)
  // of its host time.
  template <class Region, class Kept>
  static double cutIn(const std::vector<Region>& v, int64_t from, int64_t to, Kept kept) {
    auto it = std::upper_bound(v.begin(), v.end(), from, [](int64_t x, const Region& r) { return x < r.begin; });
    if (it != v.begin()) --it;
    double cut = 0;
    for (; it != v.end() && it->begin < to; ++it) {
      const int64_t in = std::max<int64_t>(0, std::min(it->end, to) - std::max(it->begin, from));
      if (in > 0) cut += static_cast<double>(in) * (1 - kept(*it));
    }
    return cut;
  }
  // The per-expert MoE loop holding t on the thread, or null.
  const MoeRange* moeAt(uint32_t track, int64_t t) const { return regionAt(moe[track], t); }
  // The share of a per-expert loop's host work that a grouped dispatch keeps: `blocks` experts' worth.
  static double moeKept(const MoeRange& r, double blocks) {
    return r.experts > 0 ? std::min(1.0, blocks / static_cast<double>(r.experts)) : 1.0;
  }
  // The part of [from, to) inside the thread's loss regions and the steps' launch spans (outside
  // them the host's work stays eager anyway).
  int64_t lossInLaunchSpans(uint32_t track, int64_t from, int64_t to) const {
    int64_t in = 0;
    forEachClipped(loss_regions[track], from, to, [&](int64_t b, int64_t e) { in += overlap(launch_spans, b, e); });
    return in;
  }
  bool inLoss(uint32_t track, int64_t t) const { return holds(loss_regions[track], t); }
  bool inRecompute(uint32_t track, int64_t t) const { return holds(recompute[track], t); }
  // The optimizer region holding t on the thread, or null.
  const OptRegion* optAt(uint32_t track, int64_t t) const { return regionAt(opt[track], t); }
  // The recorded host events that start in [from, to) on a thread ...
  int64_t eventsIn(uint32_t track, int64_t from, int64_t to) const { return countIn(host_starts[track], from, to); }
  // ... and those of them inside its in-process loader ranges.
  int64_t loaderEventsIn(uint32_t track, int64_t from, int64_t to) const {
    int64_t n = 0;
    forEachClipped(loader[track], from, to, [&](int64_t b, int64_t e) { n += countIn(host_starts[track], b, e); });
    return n;
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
    int64_t removal_in = 0;  // ... of which the in-process loader's (at their own cost)
    if (ed.host_event_overhead_ns != 0) {
      const int64_t n = events >= 0 ? events : eventsIn(track, from, to);
      const int64_t n_in = loader[track].empty() ? 0 : loaderEventsIn(track, from, to);
      const int64_t c = profilerCost(ed.host_event_overhead_ns, ed);
      removal_in = n_in * (ed.loader_event_overhead_ns >= 0 ? profilerCost(ed.loader_event_overhead_ns, ed) : c);
      removal = (n - n_in) * c + removal_in;
    }
    const bool free_host = ed.free_launches, loader_off = ed.loader_off_thread;
    if (free_host || loader_off) {
      int64_t in = loaderOverlap(track, from, to);
      // Graphed: what stays eager is the loader, the host work outside the steps' launch spans and,
      // where the optimizer cannot be captured, its step; where the model is graphed alone, the loss.
      int64_t eager = 0;
      if (free_host) {
        eager = (to - from) - overlap(launch_spans, from, to) +
                (ed.graph_keeps_optimizer ? optOverlap(track, from, to) : 0) +
                (ed.graph_keeps_loss ? lossInLaunchSpans(track, from, to) : 0);
        eager = std::min(eager, span - in);
      }
      const int64_t kept = (free_host ? eager : span - in) + (loader_off ? 0 : in);
      // ... of the part that stays: the loader's where it stays, the others' pro rata of the part
      // outside the loader that stays.
      const int64_t out = std::max<int64_t>(0, span - in), kept_out = free_host ? eager : out;
      removal = (out > 0 ? std::llround(static_cast<double>(removal - removal_in) * static_cast<double>(kept_out) /
                                        static_cast<double>(out))
                         : 0) +
                (loader_off ? 0 : removal_in);
      span = kept;
    }
    span = std::max<int64_t>(0, span - removal);
    if (ed.drop_loader_waits && !loader_wait[track].empty())
      span = std::max<int64_t>(0, span - loaderWaitCut(track, from, to));
    if (ed.host_work_off_thread && !own_work[track].empty())
      span = std::max<int64_t>(0, span - overlap(own_work[track], from, to));
    if (free_host && ed.graphed_param_ops > 0) {  // the graphed calls' own cost, per AccumulateGrad node
      const double op_ns =
          index < ed.rank_op_ns.size() && ed.rank_op_ns[index] > 0 ? ed.rank_op_ns[index] : kGraphedProbeOpNs;
      span += std::llround(static_cast<double>(countIn(accum_grad[track], from, to)) * ed.graphed_param_ops * op_ns);
    }
    // Host time inside optimizer regions (fused) and per-expert loops (grouped) scales to the share kept;
    // between a materialized attention's batched GEMMs (fused attention), none is kept.
    double cut = 0;
    if (ed.fused_optimizer && !free_host)
      cut += cutIn(opt[track], from, to, [](const OptRegion& r) { return keptShare(r); });
    if (ed.moe_blocks_kept > 0)
      cut += cutIn(moe[track], from, to, [&](const MoeRange& r) { return moeKept(r, ed.moe_blocks_kept); });
    if (ed.fused_attention && !score_regions[track].empty())
      cut += static_cast<double>(overlap(score_regions[track], from, to));
    if (cut > 0 && span > 0)
      span -= static_cast<int64_t>(std::llround(static_cast<double>(span) * cut / static_cast<double>(to - from)));
    if (ed.sparse_embedding_table_ns > 0 && !embed_bwd_at[track].empty())
      span += countIn(embed_bwd_at[track], from, to) * ed.sparse_embedding_table_ns;
    if (ed.autocast_cast_ns > 0 && !free_host && !cast_at[track].empty())  // graphed, the casts are kernels
      span += std::llround(castsIn(track, from, to) * static_cast<double>(ed.autocast_cast_ns));
    if (ed.micro_batch_merge > 1 && span > 0) {  // after the profiler's cost: of what the job itself spends
      const int64_t kept = loaderOverlap(track, from, to) + optOverlap(track, from, to);
      const double passes =
          static_cast<double>(std::max<int64_t>(0, to - from - kept)) / static_cast<double>(to - from);
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
  // The profiler's cost of a host call (the tracer's callbacks), at this rank's host speed ...
  int64_t callCost(uint32_t item, const ReplayEdits& ed) const {
    const uint16_t flags = item_flags[item];
    const bool idle = !(flags & (kOwnsWork | kSyncRole | kGraphLaunch));
    const int64_t ns = (flags & kAttrQuery) && ed.attr_call_overhead_ns >= 0 ? ed.attr_call_overhead_ns
                       : idle && ed.idle_call_overhead_ns >= 0               ? ed.idle_call_overhead_ns
                                                                             : ed.api_call_overhead_ns;
    return profilerCost(ns, ed);
  }
  // ... and the part of it that the call's traced span cannot hold (a call traced shorter than its
  // measured cost, cudaGetErrorString's 0.1 us): spent before the call's traced start, in the gap.
  int64_t callCostBefore(uint32_t item, const ReplayEdits& ed) const {
    return std::max<int64_t>(0, callCost(item, ed) - (item_end[item] - item_start[item]));
  }
  // A host gap before call `item` less that part, never below zero (a negative gap kept as it is).
  int64_t lessCallCostBefore(int64_t span, uint32_t item, const ReplayEdits& ed) const {
    return std::max<int64_t>(std::min<int64_t>(span, 0), span - callCostBefore(item, ed));
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
inline int64_t gaugeQuantile(std::vector<int64_t>& v, size_t num, size_t den) {
  if (v.size() < 100) return 0;
  auto q = v.begin() + static_cast<std::ptrdiff_t>(v.size() * num / den);
  std::nth_element(v.begin(), q, v.end());
  return *q;
}

// GPU work the ranking counts as copies, communication or compute.
inline PathCategory gpuCategory(const Event& e) {
  if (e.kind == EventKind::kMemcpy || e.kind == EventKind::kMemset) return PathCategory::kCopies;
  if (e.collective || e.hasRole(kRoleCollective)) return PathCategory::kCommunication;
  return PathCategory::kCompute;
}

}  // namespace replay_detail

using namespace replay_detail;  // inside gpudoctor: only analysis/replay/*.cc include this header

struct ReplayModel::Impl {
  std::string reason;  // not empty: unavailable
  std::vector<RankGraph> graphs;
  std::vector<std::vector<Edge>> parts;       // while building: each rank's host and GPU edges, the joins
  std::vector<Edge> edges;                    // in dependency order of their nodes, grouped by node
  std::vector<uint32_t> first_edge;           // per node: its first edge, UINT32_MAX for none
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

namespace replay_detail {

// Builds one rank's part of the graph: its items (host calls and GPU work), the host-side ranges the
// edits read, and the edges (replay/build.cc orchestrates the steps below, one concern per file).
class RankBuilder {
 public:
  RankBuilder(RankGraph& g, uint16_t rank, ReplayGraphStats& stats);
  // The host calls and ranges (host_events.cc), the GPU work and what marks it (gpu_work.cc), the
  // waits the trace does not record (inferred_waits.cc), and the edges (gpu_edges.cc, host_edges.cc).
  void hostRanges();
  void scanHostEvents();
  void optimizerRegions();
  void collectGpuWork();
  void launchSpans();
  void markAttention();
  void scoreRegions();
  void orderGpuWork();
  void inferEventWaits();
  void gpuEdges();
  void hostEdges();

  std::vector<Edge> host_edges, gpu_edges;
  ReplayGraphStats gpu_stats;  // the GPU edges' counts (built on a thread of their own)

 private:
  int32_t launchOf(uint32_t op_item) const { return g.launch_item[op_item]; }
  int64_t lastEndingBy(int64_t t_ns) const;
  int32_t otherThreadCallEndedBy(uint32_t track, int64_t by, int64_t not_before) const;
  bool mayHoldCall(const Event& op) const;
  int32_t awaitedBy(uint32_t c) const;
  int32_t queueSlotAwaitedBy(uint32_t c) const;
  // Launched work not yet started on the GPU at t: work whose launch call began by t less work that
  // began by t (launchQueue fills them, and pending_full: the queue's depth as the trace shows it).
  int64_t pendingAt(int64_t t_ns) const;
  void launchQueue();
  uint32_t eventCount(uint32_t track, int64_t from, int64_t to) const {
    return to <= from ? 0u : static_cast<uint32_t>(g.eventsIn(track, from, to));
  }
  void callEdges(uint32_t track);
  void addHost(uint32_t node, int32_t pred, uint8_t kind, int64_t c, uint32_t aux = 0, uint8_t cond = kAlways) {
    host_edges.push_back({node, pred, c, aux, rank, kind, cond});
  }

  RankGraph& g;
  const uint16_t rank;
  ReplayGraphStats& st;
  const RankTrace& t;
  const TraceIndex& idx;
  const size_t tracks;
  uint32_t nc = 0;                                                   // host call items: [0, nc); GPU work items follow
  std::vector<std::vector<std::pair<int64_t, int64_t>>> host_ops;    // top-level operators per thread
  std::vector<std::vector<std::pair<int64_t, int64_t>>> opt_ranges;  // optimizer steps per thread
  int64_t launch_min = 0;                                            // the smallest usual launch-to-start delay
  std::vector<uint32_t> by_end;                                      // GPU work items by end
  std::vector<uint32_t> calls_by_end;                                // call items by end
  std::vector<int64_t> launch_starts, gpu_starts;  // per launched work: its call's start, its own (sorted)
  int64_t pending_full = 0;
  std::vector<int32_t> last_own_op, first_own_op;          // per call: its last-ending and first-starting work
  std::vector<std::pair<uint32_t, uint32_t>> event_waits;  // (waiting work, the work it waits for)
};

}  // namespace replay_detail
}  // namespace gpudoctor
