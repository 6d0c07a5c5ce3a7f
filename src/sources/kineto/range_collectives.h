// Collectives named by host ranges: PyTorch before 2.2 puts no collective arguments on NCCL kernels,
// but wraps each collective's launch in a user_annotation "nccl:<collective>" that carries its input's
// shape and type ("Input Dims", "Input type"). This gives such kernels their collective, size and
// process group, as newer traces give them on the kernel itself.
#pragma once
#include "model/trace.h"

namespace gpudoctor {

// For every NCCL kernel of t without a collective (Event::collective == 0) whose launch lies inside a
// "nccl:<name>" range on the launching host thread: a Collective named <name>, of the range's first
// input (type and element count), in the job's default group (all world_size ranks, when the trace
// gives world_size; else no group, so it is not joined across ranks). Events must be in start order,
// before the role pass (which numbers each group's collectives).
void collectivesFromRanges(RankTrace& t);

}  // namespace gpudoctor
