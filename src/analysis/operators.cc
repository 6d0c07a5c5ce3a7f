#include "analysis/operators.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace gpudoctor {

namespace {

constexpr uint32_t kNoParent = UINT32_MAX;

struct Acc {
  int64_t calls = 0, host_total = 0, host_self = 0, gpu_self = 0, gpu_total = 0, gpu_work = 0;
};

// The windows as sorted (begin, end) pairs, and whether t lies in one.
struct Spans {
  std::vector<std::pair<int64_t, int64_t>> v;
  explicit Spans(const std::vector<StepWindow>& w) {
    for (const auto& x : w) v.emplace_back(x.begin_ns, x.end_ns);
    std::sort(v.begin(), v.end());
  }
  bool contains(int64_t t) const {
    auto it = std::upper_bound(v.begin(), v.end(), t, [](int64_t a, const auto& s) { return a < s.first; });
    return it != v.begin() && t < std::prev(it)->second;
  }
};

// A rank's host operators in event order, each with the operator it runs inside (same thread) and
// its own time (less its direct children's, clipped to it).
struct OpTree {
  std::vector<uint32_t> event;   // event index of each operator
  std::vector<uint32_t> parent;  // ordinal of the enclosing operator, or kNoParent
  std::vector<int64_t> self_ns;

  explicit OpTree(const RankTrace& t) {
    const auto& ev = t.events;
    std::unordered_map<uint32_t, std::vector<uint32_t>> open;  // track -> stack of ordinals
    for (uint32_t i = 0; i < ev.size(); ++i) {
      const Event& e = ev[i];
      if (e.kind != EventKind::kHostOp) continue;
      auto& stack = open[e.track];
      while (!stack.empty() && ev[event[stack.back()]].end_ns() <= e.start_ns) stack.pop_back();
      const uint32_t k = static_cast<uint32_t>(event.size());
      event.push_back(i);
      parent.push_back(stack.empty() ? kNoParent : stack.back());
      self_ns.push_back(e.dur_ns);
      if (!stack.empty()) {
        const Event& p = ev[event[stack.back()]];
        self_ns[stack.back()] -= std::max<int64_t>(0, std::min(e.end_ns(), p.end_ns()) - e.start_ns);
      }
      stack.push_back(k);
    }
  }
  // The ordinal of the operator at event index i (which must be one).
  uint32_t ordinalOf(uint32_t i) const {
    return static_cast<uint32_t>(std::lower_bound(event.begin(), event.end(), i) - event.begin());
  }
};

// The operator event that launched GPU work event w: by its External id, else its launch call's.
uint32_t launcherOf(const TraceIndex& idx, const Event& w) {
  int64_t ext = w.external_id;
  if (ext < 0 && w.correlation >= 0)
    if (uint32_t l = idx.launch_of.find(w.correlation); l != IdMap::kNone) ext = idx.trace->events[l].external_id;
  return ext >= 0 ? idx.op_of.find(ext) : IdMap::kNone;
}

void addRank(const TraceIndex& idx, const std::vector<StepWindow>& windows, std::unordered_map<std::string, Acc>& out,
             OperatorSummary& s) {
  const RankTrace& t = *idx.trace;
  const auto& ev = t.events;
  const OpTree tree(t);
  const Spans spans(windows);
  std::unordered_map<uint32_t, Acc> acc;  // by interned name
  auto nameOf = [&](uint32_t k) { return ev[tree.event[k]].name; };
  for (uint32_t k = 0; k < tree.event.size(); ++k) {
    const Event& e = ev[tree.event[k]];
    if (!spans.contains(e.start_ns)) continue;
    ++s.host_ops;
    Acc& a = acc[e.name];
    ++a.calls;
    a.host_self += std::max<int64_t>(0, tree.self_ns[k]);
    bool nested_in_same = false;
    for (uint32_t p = tree.parent[k]; p != kNoParent && !nested_in_same; p = tree.parent[p])
      nested_in_same = nameOf(p) == e.name;
    if (!nested_in_same) a.host_total += e.dur_ns;
  }
  std::vector<uint32_t> seen;  // names already charged for one piece of work (gpu_total)
  for (const auto& w : windows) {
    for (auto it = idx.firstStartingAt(idx.gpu_work, w.begin_ns);
         it != idx.gpu_work.end() && ev[*it].start_ns < w.end_ns; ++it) {
      const Event& g = ev[*it];
      s.gpu_ns += g.dur_ns;
      const uint32_t op = launcherOf(idx, g);
      if (op == IdMap::kNone) {
        s.gpu_unattributed_ns += g.dur_ns;
        continue;
      }
      Acc& a = acc[ev[op].name];
      a.gpu_self += g.dur_ns;
      ++a.gpu_work;
      seen.clear();
      for (uint32_t p = tree.ordinalOf(op); p != kNoParent; p = tree.parent[p]) {
        if (std::find(seen.begin(), seen.end(), nameOf(p)) != seen.end()) continue;
        seen.push_back(nameOf(p));
        acc[nameOf(p)].gpu_total += g.dur_ns;
      }
    }
  }
  s.steps += static_cast<int64_t>(windows.size());
  for (const auto& [name, a] : acc) {
    Acc& o = out[std::string(t.strings.view(name))];
    o.calls += a.calls, o.host_total += a.host_total, o.host_self += a.host_self;
    o.gpu_self += a.gpu_self, o.gpu_total += a.gpu_total, o.gpu_work += a.gpu_work;
  }
}

}  // namespace

OperatorSummary summarizeOperators(const std::vector<RankWindows>& ranks, size_t top_n) {
  OperatorSummary s;
  std::unordered_map<std::string, Acc> by_name;
  for (const auto& r : ranks)
    if (r.idx && r.windows) addRank(*r.idx, *r.windows, by_name, s);
  std::vector<OperatorStats> all;
  for (const auto& [name, a] : by_name)
    if (a.calls > 0 || a.gpu_self > 0)
      all.push_back({name, a.calls, a.host_total, a.host_self, a.gpu_self, a.gpu_total, a.gpu_work});
  s.distinct = all.size();
  auto by_gpu = [](const OperatorStats& a, const OperatorStats& b) {
    return a.gpu_self_ns != b.gpu_self_ns ? a.gpu_self_ns > b.gpu_self_ns : a.name < b.name;
  };
  auto by_host = [](const OperatorStats& a, const OperatorStats& b) {
    return a.host_self_ns != b.host_self_ns ? a.host_self_ns > b.host_self_ns : a.name < b.name;
  };
  std::vector<OperatorStats> gpu = all, host = all;
  std::sort(gpu.begin(), gpu.end(), by_gpu);
  std::sort(host.begin(), host.end(), by_host);
  auto taken = [&](const std::string& n) {
    return std::any_of(s.ops.begin(), s.ops.end(), [&](const OperatorStats& o) { return o.name == n; });
  };
  for (size_t g = 0, h = 0; s.ops.size() < std::min(top_n, all.size());) {
    while (g < gpu.size() && taken(gpu[g].name)) ++g;
    if (g < gpu.size()) s.ops.push_back(gpu[g++]);
    if (s.ops.size() >= top_n) break;
    while (h < host.size() && taken(host[h].name)) ++h;
    if (h < host.size()) s.ops.push_back(host[h++]);
  }
  std::sort(s.ops.begin(), s.ops.end(), by_gpu);
  return s;
}

}  // namespace gpudoctor
