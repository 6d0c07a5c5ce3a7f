#include "analysis/kernels.h"

#include <algorithm>
#include <unordered_map>

namespace gpudoctor {

namespace {
template <class F>
void forEachKernelIn(const TraceIndex& idx, const std::vector<StepWindow>& windows, F f) {
  const auto& ev = idx.trace->events;
  for (const auto& w : windows) {
    auto it = idx.firstStartingAt(idx.gpu_work, w.begin_ns);
    for (; it != idx.gpu_work.end() && ev[*it].start_ns < w.end_ns; ++it)
      if (ev[*it].kind == EventKind::kKernel) f(*it);
  }
}

using OpCounts = std::unordered_map<std::string, int64_t>;  // operator text -> kernels it launched
struct OpKey {
  uint32_t kernel, op, shapes;  // interned names
  bool operator==(const OpKey&) const = default;
};
struct OpKeyHash {
  size_t operator()(const OpKey& k) const {
    return std::hash<uint64_t>{}((static_cast<uint64_t>(k.kernel) << 32 | k.op) ^
                                 (static_cast<uint64_t>(k.shapes) * 0x9E3779B97F4A7C15ull));
  }
};

KernelSummary finish(std::array<std::vector<int64_t>, kKernelClassCount>& by_class,
                     std::unordered_map<std::string, std::pair<KernelClass, std::vector<int64_t>>>& by_name,
                     std::unordered_map<std::string, OpCounts>& ops, size_t top_n) {
  KernelSummary s;
  std::vector<int64_t> non_nccl;
  for (int c = 0; c < kKernelClassCount; ++c)
    if (!isCommunication(static_cast<KernelClass>(c)))
      non_nccl.insert(non_nccl.end(), by_class[c].begin(), by_class[c].end());
  s.non_nccl = DurationStats::of(non_nccl);
  for (const auto& [name, v] : by_name)
    if (v.first == KernelClass::kOptimizer &&
        (name.find("Fused") != std::string::npos || name.find("fused") != std::string::npos))
      s.fused_optimizer = true;
  for (int c = 0; c < kKernelClassCount; ++c) {
    if (by_class[c].empty()) continue;
    KernelClassStats k;
    k.cls = static_cast<KernelClass>(c);
    k.dur = DurationStats::of(by_class[c]);
    s.kernels += k.dur.count;
    s.total_ns += k.dur.total_ns;
    s.classes.push_back(k);
  }
  for (auto& k : s.classes)
    k.share = s.total_ns ? static_cast<double>(k.dur.total_ns) / static_cast<double>(s.total_ns) : 0;
  std::sort(s.classes.begin(), s.classes.end(),
            [](const auto& a, const auto& b) { return a.dur.total_ns > b.dur.total_ns; });
  for (auto& [name, v] : by_name) {
    KernelStats k;
    k.name = name;
    k.cls = v.first;
    k.dur = DurationStats::of(v.second);
    k.share = s.total_ns ? static_cast<double>(k.dur.total_ns) / static_cast<double>(s.total_ns) : 0;
    s.top.push_back(std::move(k));
  }
  std::sort(s.top.begin(), s.top.end(), [](const auto& a, const auto& b) {
    return a.dur.total_ns != b.dur.total_ns ? a.dur.total_ns > b.dur.total_ns : a.name < b.name;
  });
  if (s.top.size() > top_n) s.top.resize(top_n);
  for (auto& k : s.top) {
    const OpCounts& c = ops[k.name];
    const std::pair<const std::string, int64_t>* best = nullptr;
    for (const auto& e : c)
      if (best == nullptr || e.second > best->second || (e.second == best->second && e.first < best->first)) best = &e;
    if (best != nullptr) k.op = best->first;
  }
  return s;
}
}  // namespace

KernelSummary summarizeKernels(const std::vector<RankWindows>& ranks, size_t top_n) {
  std::array<std::vector<int64_t>, kKernelClassCount> by_class;
  std::unordered_map<std::string, std::pair<KernelClass, std::vector<int64_t>>> by_name;
  std::unordered_map<std::string, OpCounts> ops;  // kernel name -> its launching operators
  for (const auto& r : ranks) {
    const TraceIndex& idx = *r.idx;
    const auto& ev = idx.trace->events;
    // Per rank by interned id (cheap), then by text across ranks. A name keeps the class of its
    // first kernel: one kernel can serve operators of several dtypes.
    std::unordered_map<uint32_t, std::pair<KernelClass, std::vector<int64_t>>> by_id;
    std::unordered_map<OpKey, int64_t, OpKeyHash> op_ids;  // (kernel, op, shapes) name ids -> kernels
    forEachKernelIn(idx, *r.windows, [&](uint32_t i) {
      KernelClass c = idx.class_of_event[i];
      by_class[static_cast<int>(c)].push_back(ev[i].dur_ns);
      auto [it, fresh] = by_id.try_emplace(ev[i].name, c, std::vector<int64_t>{});
      it->second.second.push_back(ev[i].dur_ns);
      uint32_t op = ev[i].external_id >= 0 ? idx.op_of.find(ev[i].external_id) : IdMap::kNone;
      if (op != IdMap::kNone) ++op_ids[OpKey{ev[i].name, ev[op].name, ev[op].shapes}];
    });
    for (auto& [id, v] : by_id) {
      auto [it, fresh] = by_name.try_emplace(std::string(idx.trace->strings.view(id)), v.first, std::vector<int64_t>{});
      it->second.second.insert(it->second.second.end(), v.second.begin(), v.second.end());
    }
    const StringPool& sp = idx.trace->strings;
    for (const auto& [k, n] : op_ids) {
      std::string text(sp.view(k.op));
      if (k.shapes != 0) text += " " + std::string(sp.view(k.shapes));
      ops[std::string(sp.view(k.kernel))][text] += n;
    }
  }
  return finish(by_class, by_name, ops, top_n);
}

}  // namespace gpudoctor
