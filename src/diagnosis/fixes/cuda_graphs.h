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
// step eager): each forward and backward pass still costs the host a graphed call's work, a fixed
// part plus a part per parameter (an output detached, and an eager AccumulateGrad node that records
// and waits for an event and hands the gradient to .grad). scripts/probes/graphed_callables_cost.py on the
// H200 machine (torch 2.11, fp16 autocast; stacks of 2, 8, 24 and 64 Linear+GELU layers, 4-128
// parameters, tensors so small that the host sets the pace, 7 rounds alternating eager and graphed;
// testdata/whatif/graphed_callables_h200.jsonl), with gradients accumulating into .grad between
// passes: 0.71, 1.19, 2.79 and 5.17 ms a graphed pass, least squares 715 us + 35.7 us per parameter.
// Training loops set .grad to None each step (zero_grad's default), so each backward creates .grad
// instead of adding into it: on one H100 host, both ways in one call (--grads set_to_none and
// accumulate; validation/results/h100_2026-12-07/graphed_callables_*.jsonl), 275 us + 8.9 us against
// 242 us + 13.4 us per parameter. The H200 line scaled by those ratios (x1.14 and x0.66) is the
// committed one. The fixed part holds the small loss of the benchmark and its backward too.
inline constexpr int64_t kGraphedPassNs = 812000;
inline constexpr int64_t kGraphedParamNs = 23600;

// The model's forward and backward graphed alone (make_graphed_callables, torch.compile's
// reduce-overhead): launches and host gaps free, the optimizer step eager, and each graphed pass's
// own host cost charged at the AccumulateGrad nodes (kGraphedPassNs spread over the parameters).
inline ReplayEdits modelGraphedEdits(ReplayEdits ed, double param_tensors) {
  ed.free_launches = true;
  ed.graph_keeps_optimizer = true;
  ed.graphed_param_ns = kGraphedParamNs + std::llround(static_cast<double>(kGraphedPassNs) / param_tensors);
  return ed;
}

}  // namespace gpudoctor
