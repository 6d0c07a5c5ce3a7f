// One replay: the longest path through the graph in dependency order with the edits' offsets, then
// the step windows traced and replayed, their steady state and the replayed step's critical path.
#include "analysis/replay/graph.h"
#include "analysis/replay/steps.h"

namespace gpudoctor {

namespace {

// Whether an edge of this condition is in the graph under the edits.
bool edgeHolds(uint8_t cond, const ReplayEdits& ed) {
  const bool copies_wait = !(ed.drop_sync_waits || ed.drop_copy_waits);
  switch (cond) {
    case kIfWaits:
      return !ed.drop_sync_waits;
    case kIfNoWaits:
      return ed.drop_sync_waits;
    case kIfCopyWaits:
      return copies_wait;
    case kIfNoCopyWaits:
      return !copies_wait;
    case kIfMoeWaits:
      return !ed.drop_sync_waits && !(ed.moe_blocks_kept > 0);
    case kIfNoMoeWaits:
      return ed.drop_sync_waits || ed.moe_blocks_kept > 0;
    default:
      return true;
  }
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
  auto holds = [&](const Edge& e) { return edgeHolds(e.cond, ed); };
  for (const Edge& e : edges) {
    if (!holds(e)) continue;
    int64_t base;
    if (e.pred < 0)
      base = 0;
    else if ((base = value[static_cast<uint32_t>(e.pred)]) == kUnset)
      continue;
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
        double input =
            raw > 0 ? std::min(part, ed.free_launches ? static_cast<double>(in)
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
      acc[static_cast<size_t>(PathCategory::kOtherIdle)] +=
          static_cast<double>(value[static_cast<size_t>(node)] - begin);
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

}  // namespace gpudoctor
