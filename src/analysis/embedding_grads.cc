#include "analysis/embedding_grads.h"

#include <algorithm>
#include <string_view>

namespace gpudoctor {
namespace {

// 1 dense, 2 sparse embedding backward, 0 neither (ATen's operator names, stable across releases).
int embeddingBackwardKind(std::string_view op) {
  if (op == "aten::embedding_dense_backward" || op == "aten::_embedding_bag_dense_backward") return 1;
  if (op == "aten::embedding_sparse_backward" || op == "aten::_embedding_bag_sparse_backward") return 2;
  return 0;
}

// A kernel that writes one value over a tensor (at::zeros: FillFunctor; older builds: fill_kernel).
bool isFillKernel(std::string_view name) {
  return name.find("FillFunctor") != std::string_view::npos || name.find("fill_kernel") != std::string_view::npos;
}

}  // namespace

EmbeddingGrads findEmbeddingGrads(const RankTrace& t, const TraceIndex& idx, const std::vector<StepWindow>& windows) {
  EmbeddingGrads out;
  if (windows.empty()) return out;
  std::vector<int8_t> kind(t.strings.size(), -1);
  std::vector<int8_t> fill(t.strings.size(), -1);
  const int64_t begin = windows.front().annotated ? windows.front().cpu_begin_ns : windows.front().begin_ns;
  const int64_t end = windows.back().annotated ? windows.back().cpu_end_ns : windows.back().end_ns;
  for (const Event& e : t.events) {
    if (e.kind != EventKind::kHostOp || e.start_ns < begin || e.start_ns >= end) continue;
    int8_t& k = kind[e.name];
    if (k < 0) k = static_cast<int8_t>(embeddingBackwardKind(t.strings.view(e.name)));
    if (k == 2) ++out.sparse_backward;
    if (k != 1) continue;
    ++out.dense_backward;
    out.dense_sites.push_back({e.track, e.start_ns});
    // The GPU work launched on the operator's thread while it ran (its nested operators' too).
    for (auto it = idx.firstStartingAt(idx.launches, e.start_ns); it != idx.launches.end(); ++it) {
      const Event& call = t.events[*it];
      if (call.start_ns >= e.end_ns()) break;
      if (call.track != e.track || call.correlation < 0) continue;
      const uint32_t w = idx.work_of.find(call.correlation);
      if (w == IdMap::kNone) continue;
      const Event& work = t.events[w];
      out.backward_gpu_ns += work.dur_ns;
      int8_t& f = fill[work.name];
      if (f < 0) f = work.kind == EventKind::kKernel && isFillKernel(t.strings.view(work.name)) ? 1 : 0;
      if (f) out.fill_ns += work.dur_ns, out.fill_work.push_back(w);
    }
  }
  std::sort(out.fill_work.begin(), out.fill_work.end());
  return out;
}

}  // namespace gpudoctor
