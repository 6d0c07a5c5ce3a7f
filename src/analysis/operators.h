// The operator view (what the TensorBoard profiler plugin's "Operator" page showed): which framework
// operators (Kineto cpu_op: aten::mm, aten::copy_, ...) cost most, on the host and on the GPU, over
// the selected steps. GPU work is charged to the operator that launched it through the trace's
// External id (the innermost operator around the launch), and through the launch call's when the
// work has none.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/breakdown.h"

namespace gpudoctor {

struct OperatorStats {
  std::string name;
  int64_t calls = 0;          // calls starting in the steps
  int64_t host_total_ns = 0;  // their summed durations, with the operators they call (a call inside a
                              // call of the same name is not counted twice)
  int64_t host_self_ns = 0;   // ... less the time in the operators they call
  int64_t gpu_self_ns = 0;    // GPU work (kernels, copies, memsets) in the steps that its calls launched
  int64_t gpu_total_ns = 0;   // ... with the work of the operators they call
  int64_t gpu_work = 0;       // the number of GPU work items counted in gpu_self_ns
};

struct OperatorSummary {
  // At most top_n operators: by turns the next highest in GPU self time and in host self time, so
  // that both the GPU's and the host's costliest are there; listed by GPU self time.
  std::vector<OperatorStats> ops;
  size_t distinct = 0;              // operator names seen in the steps
  int64_t steps = 0;                // rank-steps summed over: a figure per step divides by it
  int64_t host_ops = 0;             // operator calls in the steps, all names
  int64_t gpu_ns = 0;               // GPU work time in the steps (summed durations)
  int64_t gpu_unattributed_ns = 0;  // ... of which no operator launched (no External id, or no cpu_op)
};

// Over the windows of the given ranks (one rank, or all).
OperatorSummary summarizeOperators(const std::vector<RankWindows>& ranks, size_t top_n);

}  // namespace gpudoctor
