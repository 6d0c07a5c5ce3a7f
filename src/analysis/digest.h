// One rank's analysis reduced to what the cross-rank analyses need (model/rank_digest.h), so that
// the trace can be freed before the next rank is read.
#pragma once
#include "analysis/run_analysis.h"
#include "model/rank_digest.h"

namespace gpudoctor {

// A step's additive figures (the ranking's inputs), as compare and the digest keep them.
StepFigures stepFigures(const StepBreakdown& b);

// The digest of an analyzed rank: its steps, its NCCL kernels launched inside them keyed by
// (process group, sequence number), its process groups (members from pg_config), kernel classes
// and job profile.
RankDigest digestRank(const RankAnalysis& ra);

// The digest of a rank the run left out (no GPU activity): only its identity and the reason.
RankDigest digestLeftOut(const LeftOutRank& l, int world_size);

}  // namespace gpudoctor
