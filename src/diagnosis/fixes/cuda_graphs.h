// Fix `cuda_graphs`: its measured constants (used by its edit and by tests).
#pragma once
#include <cmath>
#include <cstdint>

#include "analysis/replay/replay.h"

namespace gpudoctor {

// CUDA graphs need capturable=True for the optimizer. Adam's and AdamW's per-parameter loop
// (foreach=False) then computes its bias corrections on the GPU: 22 kernels per parameter instead
// of 8 (Adam 21 instead of 7), which adds 2.4-3.6 us of GPU time per kernel of the eager loop
// (scripts/probes/capturable_optimizer_cost.py on an H200, torch 2.11: 50 and 200 parameters of 1 Ki to
// 1 Mi elements, the graph replay timed with CUDA events against the eager kernels' time; median
// 2.9 us).
inline constexpr int64_t kCapturableLoopKernelAddNs = 2900;
// The foreach implementation, capturable, computes beta ** step per parameter (no multi-tensor
// kernel for a scalar base): 2.2-2.5 kernels per parameter instead of 0.1-0.4, and the graph replay
// takes 3.6, 5.5 and 8.3 us more GPU time per parameter than the eager foreach kernels at 4 Ki,
// 256 Ki and 1 Mi elements a parameter (the same script, --impl foreach, 76 and 200 parameters,
// AdamW and Adam alike; testdata/whatif/capturable_foreach_h200.jsonl): 3.6 us a parameter plus
// 21 % of the eager optimizer's GPU time (3.6 + 0.21 x 0.3, 6.2 and 22.4 us: 3.7, 4.9 and 8.3).
inline constexpr int64_t kCapturableForeachParamNs = 3600;
inline constexpr double kCapturableForeachGpuScale = 1.21;
// The model graphed alone (torch.cuda.make_graphed_callables, where GradScaler keeps the optimizer
// step eager, or torch.compile's reduce-overhead): each forward and backward pass still costs the host
// a graphed call's work, a fixed part plus a part per parameter (static inputs copied in, two graph
// launches, an output detached, and an eager AccumulateGrad node that hands the gradient to .grad).
// scripts/probes/graphed_callables_cost.py: stacks of 2, 8, 24 and 64 Linear+GELU layers (4-128
// parameters), fp16 autocast, tensors so small that the host sets the pace, 7 rounds alternating eager
// and graphed, .grad set to None after each pass as training loops do. Counted in the host's own time
// per recorded operator (the eager 64-layer pass's time over its operators), the line is 130.6 + 4.21
// operators per parameter on an H100 host (2.10 us an operator; validation/results/h100_2026-12-07/
// graphed_callables_set_to_none.jsonl). In those units the line moves little between hosts where in
// nanoseconds it moves 3x: with gradients accumulating, 105 + 5.83 (H100, 2.31 us an operator) against
// 137 + 6.85 (an H200 host at 5.21 us; testdata/whatif/graphed_callables_h200.jsonl).
inline constexpr double kGraphedPassOps = 130.6;
inline constexpr double kGraphedParamOps = 4.21;

// The model's forward and backward graphed alone: launches and host gaps free, the optimizer step and
// the loss (its operators, its backward nodes and what runs between them) eager, and each graphed
// pass's own host cost charged at the AccumulateGrad nodes (kGraphedPassOps spread over the
// parameters), in the trace's host time per operator (ReplayEdits::rank_op_ns).
inline ReplayEdits modelGraphedEdits(ReplayEdits ed, double param_tensors) {
  ed.free_launches = true;
  ed.graph_keeps_optimizer = true;
  ed.graph_keeps_loss = true;
  ed.graphed_param_ops = kGraphedParamOps + kGraphedPassOps / param_tensors;
  return ed;
}

}  // namespace gpudoctor
