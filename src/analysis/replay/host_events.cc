// One rank's host side as the edits read it: the calls (items [0, nc)), the recorded host events'
// times per thread, the loader's ranges and waits, steps, optimizer steps, recomputed regions, the
// checkpoint wrapper's regions and autocast's cast sites.
#include <algorithm>
#include <functional>
#include <string_view>

#include "analysis/replay/graph.h"

namespace gpudoctor::replay_detail {

RankBuilder::RankBuilder(RankGraph& graph, uint16_t r, ReplayGraphStats& stats)
    : g(graph),
      rank(r),
      st(stats),
      t(*graph.ra->trace),
      idx(graph.ra->index),
      tracks(t.tracks.size()),
      host_ops(tracks),
      opt_ranges(tracks) {}

void RankBuilder::hostRanges() {
  g.item_of.assign(t.events.size(), -1);
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
  g.loss_regions.assign(tracks, {});
  // Sorted, disjoint ranges per thread from regions in start order.
  auto merge = [&](const std::vector<HostRegion>& regions, std::vector<std::vector<std::pair<int64_t, int64_t>>>& out) {
    out.assign(tracks, {});
    for (const HostRegion& r : regions)
      if (r.track < tracks && r.begin_ns < r.end_ns) {
        auto& v = out[r.track];
        if (!v.empty() && r.begin_ns < v.back().second)
          v.back().second = std::max(v.back().second, r.end_ns);
        else
          v.push_back({r.begin_ns, r.end_ns});
      }
  };
  merge(g.ra->checkpoint.recompute, g.recompute);
  merge(g.ra->checkpoint.wrapper, g.ckpt_wrapper);
  int64_t wrapper_ns = 0;
  for (const auto& v : g.ckpt_wrapper)
    for (const auto& [b, e] : v) wrapper_ns += e - b;
  if (wrapper_ns > 0)
    g.ckpt_blocks_per_ns = static_cast<double>(g.ra->checkpoint.blocks()) / static_cast<double>(wrapper_ns);
  g.moe.assign(tracks, {});
  for (const MoeLoop& l : g.ra->moe.loops)  // in start order; loops of one thread do not overlap
    if (l.track < tracks && l.begin_ns < l.end_ns) g.moe[l.track].push_back({l.begin_ns, l.end_ns, l.experts});
  g.cast_at.assign(tracks, {});
  g.cast_cum.assign(tracks, {0.0});
  for (const CastSite& c : g.ra->autocast_casts)  // in time order
    if (c.track < tracks)
      g.cast_at[c.track].push_back(c.at_ns), g.cast_cum[c.track].push_back(g.cast_cum[c.track].back() + c.casts);
  g.embed_bwd_at.assign(tracks, {});
  for (const EmbeddingGrads::Site& s : g.ra->embedding.dense_sites)  // in time order
    if (s.track < tracks) g.embed_bwd_at[s.track].push_back(s.at_ns);
  g.step_starts.assign(tracks, {});
  g.opt.assign(tracks, {});
}

namespace {

// What an operator's name says of the loss (RankGraph::loss_regions).
enum LossName : int8_t { kUnknownName = -1, kOtherName, kLossOp, kBackwardNode, kLossBackward, kSoftmaxBackward };

LossName lossName(std::string_view n) {
  constexpr std::string_view node = "autograd::engine::evaluate_function: ";
  if (n.starts_with(node)) {
    n.remove_prefix(node.size());
    if (n.find("Loss") != std::string_view::npos || n.find("CrossEntropy") != std::string_view::npos)
      return kLossBackward;
    return n.starts_with("LogSoftmaxBackward") || n.starts_with("SoftmaxBackward") ? kSoftmaxBackward : kBackwardNode;
  }
  if (n.starts_with("aten::") && n.find("backward") == std::string_view::npos &&
      (n.find("loss") != std::string_view::npos || n.find("cross_entropy") != std::string_view::npos))
    return kLossOp;
  return kOtherName;
}

// Finds the loss regions from the operators in start order (all threads): the last loss operator
// before a backward opens the forward part on its thread (one nested in it does not; a later one, as
// after an evaluation's loss, moves it), the next backward node closes it and opens the backward part
// on the node's thread, which runs to the loss's backward node (and a softmax node right after it).
class LossRegions {
 public:
  explicit LossRegions(std::vector<std::vector<std::pair<int64_t, int64_t>>>& out) : out_(out) {}
  // A step starts: a loss without a backward in the last one (evaluation) opens nothing; a backward
  // part that reached its loss node is kept.
  void stepStart() {
    if (bwd_ && saw_loss_) push(bwd_track_, bwd_start_, bwd_end_);
    fwd_ = bwd_ = false;
  }
  void add(LossName kind, uint32_t track, int64_t start, int64_t end) {
    if (kind == kLossOp) {
      if (!bwd_ && (!fwd_ || track != fwd_track_ || start >= fwd_end_))
        fwd_ = true, fwd_track_ = track, fwd_start_ = start, fwd_end_ = end;
      return;
    }
    if (kind < kBackwardNode) return;
    if (fwd_ && start > fwd_start_) {
      push(fwd_track_, fwd_start_, start);
      fwd_ = false;
      bwd_ = true, bwd_track_ = track, bwd_start_ = start, bwd_end_ = start, saw_loss_ = false, nodes_ = 0;
    }
    if (!bwd_ || track != bwd_track_) return;
    if (kind == kLossBackward) {
      bwd_end_ = end, saw_loss_ = true;
    } else if (saw_loss_) {
      if (kind == kSoftmaxBackward) bwd_end_ = end;
      push(bwd_track_, bwd_start_, bwd_end_);
      bwd_ = false;
    } else if (++nodes_ > kMaxNodesBeforeLoss) {
      bwd_ = false;  // no loss node where the backward starts: the loss was not recognized
    } else {
      bwd_end_ = end;
    }
  }

 private:
  // Nodes before the loss's own (the scale multiply's, the accumulation division's, a sum's).
  static constexpr int kMaxNodesBeforeLoss = 8;
  void push(uint32_t track, int64_t b, int64_t e) {
    if (track < out_.size() && b < e && (out_[track].empty() || b >= out_[track].back().second))
      out_[track].push_back({b, e});
  }
  std::vector<std::vector<std::pair<int64_t, int64_t>>>& out_;
  bool fwd_ = false, bwd_ = false, saw_loss_ = false;
  uint32_t fwd_track_ = 0, bwd_track_ = 0;
  int64_t fwd_start_ = 0, fwd_end_ = 0, bwd_start_ = 0, bwd_end_ = 0;
  int nodes_ = 0;
};

}  // namespace

// One pass over the events (they are far apart in memory): host events, steps, optimizer and
// loader ranges, and the host calls, top level per thread (a call inside another, a driver call
// under a runtime call, is part of it).
void RankBuilder::scanHostEvents() {
  std::vector<int8_t> accum_name(t.strings.size(), -1);  // per name: an AccumulateGrad node, -1 not yet known
  std::vector<int8_t> loss_name(t.strings.size(), kUnknownName);
  LossRegions loss(g.loss_regions);
  std::vector<int8_t> attr_name(t.strings.size(), -1);  // per name: cudaFuncGetAttributes, -1 not yet known
  std::vector<int64_t> accum_end(tracks, INT64_MIN);
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
    const bool host_event =
        e.kind == EventKind::kHostOp || e.kind == EventKind::kRange || e.kind == EventKind::kHostFunction;
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
      g.options_in_gaps |= e.kind == EventKind::kHostFunction || (e.kind == EventKind::kHostOp && e.dtype != 0);
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
      int8_t& ln = loss_name[e.name];
      if (ln == kUnknownName) ln = lossName(t.strings.view(e.name));
      if (ln != kOtherName) loss.add(static_cast<LossName>(ln), e.track, e.start_ns, e.end_ns());
      int8_t& accum = accum_name[e.name];
      if (accum < 0) accum = t.strings.view(e.name).ends_with("AccumulateGrad") ? 1 : 0;
      if (accum) {  // the node (autograd::engine::evaluate_function: ...), not the operator inside it
        auto& v = g.accum_grad[e.track];
        if (v.empty() || e.start_ns >= accum_end[e.track]) v.push_back(e.start_ns), accum_end[e.track] = e.end_ns();
      }
      auto& v = host_ops[e.track];
      if (v.empty() || e.start_ns >= v.back().second) v.push_back({e.start_ns, e.end_ns()});
    }
    if (e.hasRole(kRoleStep)) g.step_starts[e.track].push_back(e.start_ns), loss.stepStart();
    if (e.hasRole(kRoleOptimizerStep)) {
      auto& v = opt_ranges[e.track];
      if (v.empty() || e.start_ns >= v.back().second) v.push_back({e.start_ns, e.end_ns()});
    }
    if (e.hasRole(kRoleDataLoading) && !e.hasRole(kRoleLoaderInProcess)) {
      auto& v = g.loader_wait[e.track];
      if (v.empty() || e.start_ns >= v.back().second) v.push_back({e.start_ns, e.end_ns()});
      if (g.loader_handoff_ns == 0 || e.dur_ns < g.loader_handoff_ns)
        g.loader_handoff_ns = std::max<int64_t>(1, e.dur_ns);
    }
    if (e.hasRole(kRoleDataLoading) && e.hasRole(kRoleLoaderInProcess)) {
      auto& v = g.loader[e.track];
      if (!v.empty() && e.start_ns < v.back().second)
        v.back().second = std::max(v.back().second, e.end_ns());
      else
        v.push_back({e.start_ns, e.end_ns()});
    }
  }
  g.host_gap_p25 = gaugeQuantile(gaps, 1, 4);
}

void RankBuilder::optimizerRegions() {
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
    if (!g.opt[g.item_track[c]].empty() && g.optAt(g.item_track[c], g.item_start[c]))
      g.item_flags[c] |= RankGraph::kInOptimizer;
  for (uint32_t c = 0; c < g.calls.size(); ++c)
    if (g.inRecompute(g.item_track[c], g.item_start[c])) g.item_flags[c] |= RankGraph::kInRecompute;
  for (uint32_t c = 0; c < g.calls.size(); ++c)
    if (!g.moe[g.item_track[c]].empty() && g.moeAt(g.item_track[c], g.item_start[c]))
      g.item_flags[c] |= RankGraph::kInMoe;
}

}  // namespace gpudoctor::replay_detail
