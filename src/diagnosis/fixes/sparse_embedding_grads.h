// Fix `sparse_embedding_grads`: its constant and edit (used by the fix, by the dense-gradient finding's
// bound and by tests).
#pragma once
#include <cstdint>

#include "analysis/replay/replay.h"
#include "analysis/run_analysis.h"

namespace gpudoctor {

// The sparse path's own host work per table and step: EmbeddingBag(sparse=True)'s backward coalesces the
// looked-up ids (a sort, with a host sync for their count) and SparseAdam runs about 24 operators per
// table. On one H100 host (validation/jobs/dlrm_embeddingbag.py, 8 tables of 500k x 64, batch 2048 x 20
// ids; validation/results/h100_2026-12-07d/results_F{1,2}_g24.jsonl): the base's replay with the tables'
// fills and update gone and nothing added puts the step at 5.80 ms, the sparse variant measured 7.76 ms
// un-profiled: (7.76 - 5.80) / 8 tables. Not scaled by the host's speed: the same job's H200 fixture
// (testdata/lab, a host 2x slower by its gauge) measured 0.78x [0.74, 0.81], predicted so at 0.80x, at
// 0.69x with the cost scaled.
inline constexpr int64_t kSparseEmbeddingTableNs = 245000;

// The dense tables' zero fills gone and the optimizer's estimated update of them
// (analysis/embedding_grads.h: tableUpdateNs), plus `table_ns` of host work per table and step. False
// where the run has no dense table's fill.
bool sparseEmbeddingEdit(const RunAnalysis& run, int64_t table_ns, ReplayEdits& ed);

}  // namespace gpudoctor
