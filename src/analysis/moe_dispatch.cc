#include "analysis/moe_dispatch.h"

#include <algorithm>
#include <string_view>

#include "analysis/kernel_class.h"

namespace gpudoctor {
namespace {

// A top-level operator on a host thread, with what ran under it.
struct TopOp {
  int64_t start = 0, end = 0;
  uint32_t name = 0;
  bool gemm = false;    // it launched a GEMM-class kernel
  int64_t syncs = 0;    // synchronizing calls under it whose operator's output size depends on the data
  int64_t sync_ns = 0;  // ... and their time
};

// An operator whose output's size depends on the values (the host must read it back): what a
// per-expert dispatch waits on, whatever the code calls (torch.where(mask), .nonzero(), x[mask]).
bool dataDependentSize(std::string_view op) {
  for (std::string_view k : {"nonzero", "masked_select", "unique", "repeat_interleave", "argwhere"})
    if (op.find(k) != std::string_view::npos) return true;
  return false;
}

bool sameBlock(const std::vector<TopOp>& v, size_t a, size_t b, size_t len) {
  for (size_t j = 0; j < len; ++j)
    if (v[a + j].name != v[b + j].name) return false;
  return true;
}

// The per-expert runs in ops[from, to) of one thread and one step: blocks of 2..kMoeMaxBlockOps
// operators repeated at least kMoeMinExperts times in a row, with 1..kMoeMaxExpertGemms GEMM
// operators each; the shortest block that repeats wins, scanned from the earliest operator. Forward
// (backward false): blocks with a data-dependent sync, at least one per expert. Backward: blocks
// without syncs. Prefix counts make a block's checks O(1), so a step costs O(operators x
// kMoeMaxBlockOps) plus the blocks that pass them.
void findRuns(const std::vector<TopOp>& ops, size_t from, size_t to, bool backward, uint32_t track,
              std::vector<MoeLoop>& out) {
  if (to - from < 2 * static_cast<size_t>(kMoeMinExperts)) return;
  std::vector<int64_t> gemms(to - from + 1, 0), syncs(to - from + 1, 0);
  for (size_t j = from; j < to; ++j) {
    gemms[j - from + 1] = gemms[j - from] + (ops[j].gemm ? 1 : 0);
    syncs[j - from + 1] = syncs[j - from] + ops[j].syncs;
  }
  auto in = [&](const std::vector<int64_t>& prefix, size_t a, size_t b) { return prefix[b - from] - prefix[a - from]; };
  size_t i = from;
  while (i < to) {
    bool found = false;
    for (size_t len = 2; len <= static_cast<size_t>(kMoeMaxBlockOps) && i + len * kMoeMinExperts <= to; ++len) {
      const int64_t g = in(gemms, i, i + len);
      if (g == 0 || g > kMoeMaxExpertGemms || (in(syncs, i, i + len) > 0) == backward) continue;
      size_t k = 1;
      while (k < static_cast<size_t>(kMoeMaxExperts) && i + (k + 1) * len <= to && sameBlock(ops, i, i + k * len, len))
        ++k;
      if (k < static_cast<size_t>(kMoeMinExperts)) continue;
      MoeLoop l;
      l.track = track, l.experts = static_cast<int>(k), l.ops_per_expert = static_cast<int>(len);
      l.begin_ns = ops[i].start;
      l.syncs = in(syncs, i, i + k * len);
      if (!backward && l.syncs < static_cast<int64_t>(k)) continue;  // a sync per expert at least
      for (size_t j = i; j < i + k * len; ++j) {
        l.sync_ns += ops[j].sync_ns;
        l.end_ns = std::max(l.end_ns, ops[j].end);
      }
      l.backward = backward;
      out.push_back(l);
      i += k * len;
      found = true;
      break;
    }
    if (!found) ++i;
  }
}

}  // namespace

MoeDispatch findMoeDispatch(const RankTrace& t, const TraceIndex& idx, const std::vector<StepWindow>& windows) {
  MoeDispatch out;
  if (windows.empty()) return out;
  const size_t tracks = t.tracks.size();
  std::vector<std::vector<TopOp>> ops(tracks);
  // Per thread: the host operators open at the current event (events are in start order, longer
  // first), to find each call's top-level and innermost operator.
  std::vector<std::vector<uint32_t>> open(tracks);
  for (uint32_t i = 0; i < t.events.size(); ++i) {
    const Event& e = t.events[i];
    if (e.track >= tracks || t.tracks[e.track].gpu) continue;
    auto& stack = open[e.track];
    while (!stack.empty() && t.events[stack.back()].end_ns() <= e.start_ns) stack.pop_back();
    if (e.kind == EventKind::kHostOp) {
      if (stack.empty()) ops[e.track].push_back({e.start_ns, e.end_ns(), e.name});
      stack.push_back(i);
      continue;
    }
    if ((e.kind != EventKind::kRuntimeCall && e.kind != EventKind::kDriverCall) || stack.empty() ||
        ops[e.track].empty())
      continue;
    TopOp& top = ops[e.track].back();
    if (e.hasRole(kRoleSyncCall) && dataDependentSize(t.strings.view(t.events[stack.back()].name))) {
      ++top.syncs;
      top.sync_ns += e.dur_ns;
    }
    if (e.correlation >= 0) {
      const uint32_t w = idx.work_of.find(e.correlation);
      if (w != IdMap::kNone && t.events[w].kind == EventKind::kKernel && isGemm(idx.class_of_event[w])) top.gemm = true;
    }
  }
  for (const StepWindow& w : windows) {
    const int64_t begin = w.annotated ? w.cpu_begin_ns : w.begin_ns, end = w.annotated ? w.cpu_end_ns : w.end_ns;
    const size_t first = out.loops.size();
    // Forward loops first; backward ones only in a step that has some, and counted where a forward
    // loop of as many experts ran in it.
    for (const bool backward : {false, true}) {
      if (backward && out.loops.size() == first) break;
      for (uint32_t track = 0; track < tracks; ++track) {
        const auto& v = ops[track];
        auto lo = std::lower_bound(v.begin(), v.end(), begin, [](const TopOp& o, int64_t x) { return o.start < x; });
        auto hi = std::lower_bound(lo, v.end(), end, [](const TopOp& o, int64_t x) { return o.start < x; });
        findRuns(v, static_cast<size_t>(lo - v.begin()), static_cast<size_t>(hi - v.begin()), backward, track,
                 out.loops);
      }
    }
    std::vector<int> forward_experts;
    for (size_t k = first; k < out.loops.size(); ++k)
      if (!out.loops[k].backward) forward_experts.push_back(out.loops[k].experts);
    const auto kept =
        std::remove_if(out.loops.begin() + static_cast<std::ptrdiff_t>(first), out.loops.end(), [&](const MoeLoop& l) {
          return l.backward &&
                 std::find(forward_experts.begin(), forward_experts.end(), l.experts) == forward_experts.end();
        });
    out.loops.erase(kept, out.loops.end());
  }
  std::sort(out.loops.begin(), out.loops.end(),
            [](const MoeLoop& a, const MoeLoop& b) { return a.begin_ns < b.begin_ns; });
  return out;
}

}  // namespace gpudoctor
