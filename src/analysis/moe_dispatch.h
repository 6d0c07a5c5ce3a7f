// A mixture-of-experts layer that dispatches tokens expert by expert: in forward, one block of
// operators per expert, repeated, each starting with a host synchronization (the tokens routed to
// the expert found with nonzero / a boolean index, whose size the host must read) and running
// matrix work (the expert's GEMMs); in backward, the same experts' nodes as a block repeated as
// many times. Recognized by that structure on the host timeline, not by operator names, which
// differ between implementations (Hugging Face's `torch.where(expert_mask[e])`, `.nonzero()`,
// `x[mask]`). A fixed-capacity dispatch with the experts' GEMMs batched has neither the syncs nor
// the per-expert launches, and pads each expert to its capacity (diagnosis/fixes/moe_grouped_dispatch).
#pragma once
#include <cstdint>
#include <vector>

#include "analysis/steps.h"
#include "analysis/trace_index.h"
#include "model/trace.h"

namespace gpudoctor {

// At least this many experts in a row make a per-expert loop (fewer: a layer or two that happen to
// repeat).
inline constexpr int kMoeMinExperts = 4;
// ... and at most this many (DeepSeek-V3 routes over 256): a longer run is counted to here.
inline constexpr int kMoeMaxExperts = 1024;
// A block is at most this many top-level operators (an expert's forward or backward: 5-30).
inline constexpr int kMoeMaxBlockOps = 48;
// ... and at most this many of them run matrix work: an expert is a feed-forward block (2 GEMMs, 3
// gated). A block of more is a stack of layers with a sync each (a boolean mask every other layer:
// a transformer layer runs 4 or more).
inline constexpr int kMoeMaxExpertGemms = 3;

struct MoeLoop {
  uint32_t track = 0;                // index into RankTrace::tracks
  int64_t begin_ns = 0, end_ns = 0;  // first block's first operator start .. last block's last operator end
  int experts = 0;                   // blocks in a row
  int ops_per_expert = 0;            // top-level operators per block
  bool backward = false;             // the backward nodes of a forward loop (no syncs of their own)
  int64_t syncs = 0;                 // synchronizing calls inside (forward)
  int64_t sync_ns = 0;               // the host's time blocked in them
};

struct MoeDispatch {
  std::vector<MoeLoop> loops;  // in start order
  bool found() const { return !loops.empty(); }
};

// The per-expert loops of one rank's selected step windows. A backward loop is kept only where a
// forward loop of the same number of experts ran in the same step.
MoeDispatch findMoeDispatch(const RankTrace& t, const TraceIndex& idx, const std::vector<StepWindow>& windows);

}  // namespace gpudoctor
