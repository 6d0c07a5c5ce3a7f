// The model: every rank's graph built (build.cc) and joined across ranks at their collectives,
// ordered once; then any number of replays, on threads; and what the graph tells of the host's speed
// and of the DataLoader.
#include <atomic>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "analysis/replay/graph.h"

namespace gpudoctor {

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
      m.reason = fmt::format(
          "rank {}: only {:.0f}% of the GPU work links to a recorded launch call (the trace lacks "
          "runtime events or correlation ids): replay unavailable",
          t.rank, 100.0 * static_cast<double>(linked) / static_cast<double>(g.ops.size()));
      return;
    }
    int64_t recorded_end = INT64_MIN;
    for (const Event& e : t.events)
      if (!e.hasRole(kRoleStep) && e.kind != EventKind::kGpuRange) recorded_end = std::max(recorded_end, e.end_ns());
    for (const StepWindow& w : g.windows)  // more of the step unrecorded than recorded
      if (w.annotated &&
          w.cpu_end_ns - recorded_end > std::max<int64_t>(kClockToleranceNs, recorded_end - w.cpu_begin_ns)) {
        m.reason = fmt::format(
            "rank {}: step {} ends {:.3f} ms after the last recorded event (cut by the profiler's "
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
        joined.push_back(
            {g.end(item), static_cast<int32_t>(g.start(item)), 0, item, static_cast<uint16_t>(r), kGpu, kAlways});
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
        joined.push_back({g.end(item), static_cast<int32_t>(m.graphs[r2].start(item2)),
                          e.end_ns() - e2.start_ns - e2.dur_ns, static_cast<uint32_t>(m.joins.size() - 1),
                          static_cast<uint16_t>(r), kJoin, kAlways});
      }
    }
  }
  m.parts.push_back(std::move(joined));
  // A cycle means the trace's clocks contradict its dependencies, and no number is better than a
  // wrong one.
  m.order();
}

ReplayModel::~ReplayModel() = default;

std::vector<int64_t> ReplayModel::hostGapP25() const {
  std::vector<int64_t> v;
  for (const RankGraph& g : impl_->graphs) v.push_back(g.host_gap_p25);
  return v;
}

std::vector<bool> ReplayModel::profilerOptionsInGaps() const {
  std::vector<bool> v;
  for (const RankGraph& g : impl_->graphs) v.push_back(g.options_in_gaps);
  return v;
}

std::vector<double> ReplayModel::operatorsPerStep() const {
  std::vector<double> v;
  for (const RankGraph& g : impl_->graphs) {
    if (g.windows.empty()) {
      v.push_back(0);
      continue;
    }
    const StepWindow &first = g.windows.front(), &last = g.windows.back();
    const int64_t from = first.annotated ? first.cpu_begin_ns : first.begin_ns;
    const int64_t to = last.annotated ? last.cpu_end_ns : last.end_ns;
    int64_t n = 0;
    for (const auto& starts : g.work_starts) n += countIn(starts, from, to);
    v.push_back(static_cast<double>(n) / static_cast<double>(g.windows.size()));
  }
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

std::vector<int64_t> ReplayModel::dispatchP50() const {  // on demand: the committed gauge is hostGapP25
  std::vector<int64_t> v;
  struct Open {
    int64_t start, end;
    bool child;
  };
  for (const RankGraph& g : impl_->graphs) {
    const RankTrace& t = *g.ra->trace;
    std::vector<std::vector<Open>> open(t.tracks.size());
    std::vector<int64_t> d;  // an operator's start to its first child operator's start
    for (const Event& e : t.events) {
      if (e.start_ns >= g.host_cut) break;
      if (e.kind != EventKind::kHostOp || e.track >= open.size()) continue;
      auto& st = open[e.track];
      while (!st.empty() && st.back().end <= e.start_ns) st.pop_back();
      if (!st.empty() && !st.back().child && e.end_ns() <= st.back().end) {
        d.push_back(e.start_ns - st.back().start);
        st.back().child = true;
      }
      st.push_back({e.start_ns, e.end_ns(), false});
    }
    v.push_back(gaugeQuantile(d, 1, 2));
  }
  return v;
}

int64_t ReplayModel::materializedAttentionNs() const {
  double total = 0;
  int ranks = 0;
  for (const RankGraph& g : impl_->graphs) {
    if (g.windows.empty()) continue;
    const uint32_t nc = static_cast<uint32_t>(g.calls.size());
    int64_t ns = 0;
    for (uint32_t j = 0; j < g.items(); ++j) {
      const uint16_t f = g.item_flags[j];
      if (j >= nc ? (f & (RankGraph::kAttnGemm | RankGraph::kAttnScores)) != 0 : (f & RankGraph::kLaunchesScores) != 0)
        ns += g.item_end[j] - g.item_start[j];
    }
    total += static_cast<double>(ns) / static_cast<double>(g.windows.size());
    ++ranks;
  }
  return ranks ? std::llround(total / ranks) : 0;
}

LoaderPool ReplayModel::loaderPool() const {
  LoaderPool p;
  double ranks = 0, delivered = 0;
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
    // The fetches that waited, in the replayed windows, by end: the pool's delivery period.
    if (!g.windows.empty()) {
      const int64_t from = ws.front().begin_ns, to = ws[g.windows.size() - 1].end_ns;
      std::vector<std::pair<int64_t, int64_t>> fetches;  // of every thread, in start order
      for (const auto& v : g.loader_wait)
        for (const auto& f : v)
          if (f.first >= from && f.first < to) fetches.push_back(f);
      std::sort(fetches.begin(), fetches.end());
      int64_t first_end = -1, last_end = -1, first_at = 0, last_at = 0, fetched = 0;
      for (const auto& [b, e] : fetches) {
        if (p.fetches++ == 0 || static_cast<double>(e - b) < p.shortest_fetch_ns)
          p.shortest_fetch_ns = static_cast<double>(e - b);
        ++fetched;
        if (e - b <= kLoaderWaitedNs) continue;
        ++p.waited;
        if (first_end < 0) first_end = e, first_at = fetched;
        last_end = e, last_at = fetched;
      }
      if (last_at > first_at && last_end > first_end) {
        p.delivery_period_ns += static_cast<double>(last_end - first_end) / static_cast<double>(last_at - first_at);
        ++delivered;
      }
    }
    // Means, not medians: a pool of W workers delivers its batches in bursts (W ready at once, then
    // a long wait), so most steps wait for nothing and the pool's period is its throughput.
    p.wait_per_step_ns += meanOf(wait);
    p.host_step_ns += meanOf(host);
    p.handoff_ns = std::max(p.handoff_ns, static_cast<double>(g.loader_handoff_ns));
    for (const auto& v : g.loader_wait) p.multiprocess |= !v.empty();
  }
  if (ranks > 0) p.wait_per_step_ns /= ranks, p.host_step_ns /= ranks;
  if (delivered > 0) p.delivery_period_ns /= delivered;
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
