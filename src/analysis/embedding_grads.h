// Embedding tables with dense gradients: each backward pass of nn.Embedding / nn.EmbeddingBag
// (sparse=False) zeroes a gradient the size of the whole table and scatters the looked-up rows into
// it (aten::embedding_dense_backward, aten::_embedding_bag_dense_backward), and the optimizer then
// updates every row of every table, looked up or not. The table's size shows in the zero fill under
// that operator: one write pass over the table's bytes.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "analysis/steps.h"
#include "analysis/trace_index.h"
#include "model/trace.h"

namespace gpudoctor {

struct EmbeddingGrads {
  int64_t dense_backward = 0;       // dense embedding backward operators in the selected steps
  int64_t fill_ns = 0;              // the GPU time of the zero fills launched under them
  int64_t backward_gpu_ns = 0;      // all GPU work launched under them
  int64_t sparse_backward = 0;      // sparse ones (sparse=True): the fix is in use
  std::vector<uint32_t> fill_work;  // the fills' events (indices into RankTrace::events), sorted
  // Where each dense backward operator starts: its thread (index into RankTrace::tracks) and time, in
  // time order (what a sparse gradient's own host work would be charged at).
  struct Site {
    uint32_t track;
    int64_t at_ns;
  };
  std::vector<Site> dense_sites;
};

// The optimizer's update of the tables, estimated: a memory-bound pass over each table's bytes per
// access the optimizer makes (fused AdamW 7, foreach or per-parameter about 25), each as long as the
// table's zero fill (one write pass), at most all of the optimizer's GPU time. Per step, ns.
inline double tableUpdateNs(double fill_ns, double optimizer_ns, bool fused) {
  const double accesses = fused ? 7.0 : 25.0;
  return std::min(optimizer_ns, accesses * fill_ns);
}

// Over one rank's selected step windows.
EmbeddingGrads findEmbeddingGrads(const RankTrace& t, const TraceIndex& idx, const std::vector<StepWindow>& windows);

}  // namespace gpudoctor
