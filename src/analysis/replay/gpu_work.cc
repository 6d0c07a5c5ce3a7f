// One rank's GPU work as items (after the calls), each linked to its launch call and marked with what
// the edits need: copies from pageable memory, FP32 fused attention, a materialized attention's
// kernels, work inside the optimizer or a recomputed region or a CUDA graph; the steps' launch spans; and
// the host time between a materialized attention's two GEMMs, which a fused kernel replaces.
#include <algorithm>

#include "analysis/breakdown.h"
#include "analysis/replay/graph.h"

namespace gpudoctor::replay_detail {

// GPU work, and the launch call of each (-1: none recorded).
void RankBuilder::collectGpuWork() {
  nc = static_cast<uint32_t>(g.calls.size());
  host_edges.reserve(3 * static_cast<size_t>(nc));
  // GPU work, and the launch call of each (-1: none recorded).
  g.ops.reserve(idx.gpu_work.size());
  g.launch_item.assign(nc, -1);
  g.work_count.assign(nc, 0);
  // Per kernel name (the pool's id), whether it is FP32 fused attention: -1 not yet known.
  std::vector<int8_t> fp32_attention(t.strings.size(), -1);
  std::vector<int8_t> kind_of_name(t.strings.size(), -1);  // PrecisionKind per kernel name, -1: not yet
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
    if (const auto& fills = g.ra->embedding.fill_work;
        !fills.empty() && std::binary_search(fills.begin(), fills.end(), w))
      flags |= RankGraph::kEmbedFill;
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
      if (lf & RankGraph::kInMoe) flags |= RankGraph::kInMoe;
      if (lf & RankGraph::kGraphLaunch) flags |= RankGraph::kInGraph;
      if (flags & RankGraph::kPageableHtoD) lf |= RankGraph::kLaunchesPageable;
    }
    g.item_flags.push_back(flags);
    PrecisionKind pk = PrecisionKind::kNone;
    if (e.kind == EventKind::kKernel) {
      int8_t& k = kind_of_name[e.name];
      if (k < 0) k = static_cast<int8_t>(precisionKindOf(t.strings.view(e.name)));
      pk = static_cast<PrecisionKind>(k);
      const uint32_t op = e.external_id >= 0 ? idx.op_of.find(e.external_id) : IdMap::kNone;
      if (op != IdMap::kNone && isCudnnRnnOperator(t.strings.view(t.events[op].name))) pk = PrecisionKind::kRecurrent;
    }
    g.work_kind.push_back(pk);
  }
  st.calls += static_cast<int64_t>(g.calls.size());
  st.gpu_work += static_cast<int64_t>(g.ops.size());
}

void RankBuilder::launchSpans() {
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
      if (!merged.empty() && s.first <= merged.back().second)
        merged.back().second = std::max(merged.back().second, s.second);
      else
        merged.push_back(s);
    g.launch_spans = std::move(merged);
  }
}

void RankBuilder::markAttention() {
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
}

void RankBuilder::scoreRegions() {
  // Per thread, the host time between an attention's two batched GEMMs (the top-level operators that
  // launch them: QK^T then PV in forward, their backward nodes in backward), where every operator in
  // between launches score-matrix kernels or nothing (views, casts, masking, softmax, their backward
  // nodes) and at least one launches a score kernel; a fused kernel replaces all of it.
  constexpr int kMaxBetweenOps = 24;
  constexpr uint8_t kGemm = 1, kScores = 2, kOther = 4;
  std::vector<uint8_t> launches(nc, 0);
  for (uint32_t j = nc; j < g.items(); ++j) {
    if (g.launch_item[j] < 0) continue;
    const uint16_t f = g.item_flags[j];
    launches[g.launch_item[j]] |= (f & RankGraph::kAttnGemm) ? kGemm : (f & RankGraph::kAttnScores) ? kScores : kOther;
  }
  g.score_regions.assign(tracks, {});
  for (size_t tr = 0; tr < tracks; ++tr) {
    const auto& calls = g.calls_on_track[tr];
    size_t c = 0;
    int64_t open = INT64_MIN;  // the end of the last attention GEMM operator, while what follows is clean
    int between = 0;
    bool scores = false;
    for (const auto& [b, e] : host_ops[tr]) {  // disjoint, in start order, as the calls are
      while (c < calls.size() && g.item_start[calls[c]] < b) ++c;
      uint8_t k = 0;
      for (size_t i = c; i < calls.size() && g.item_start[calls[i]] < e; ++i) k |= launches[calls[i]];
      if (k & kGemm) {  // an attention GEMM's operator (with the copies that make its operands contiguous)
        if (open != INT64_MIN && scores && between <= kMaxBetweenOps) g.score_regions[tr].push_back({open, b});
        open = e, between = 0, scores = false;
      } else if (k & kOther) {
        open = INT64_MIN;
      } else if (open != INT64_MIN) {
        ++between;
        scores |= (k & kScores) != 0;
      }
    }
  }
}

}  // namespace gpudoctor::replay_detail
