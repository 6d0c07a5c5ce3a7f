// Fix `no_checkpointing`: its measured constants (used by its edit and by tests).
#pragma once
#include <cstdint>

namespace gpudoctor {

// Non-reentrant activation checkpointing (torch.utils.checkpoint(use_reentrant=False)) costs host
// time besides the forward it re-runs: saved-tensor pack hooks and RNG state in forward, the unpack
// and recomputation hooks in backward. scripts/probes/checkpoint_host_cost.py on the H200 machine (torch
// 2.11; stacks of 4 and 16 GPT or MLP blocks, FP32 and bf16, tiny tensors so that the host sets the
// step; testdata/whatif/checkpoint_host_cost_h200.jsonl): 0.92-1.67 ms per checkpointed block,
// median 1.08 ms, of which 0.27-0.58 ms in forward; un-profiled, on that machine's host.
inline constexpr int64_t kCheckpointWrapperBlockNs = 1083000;

}  // namespace gpudoctor
