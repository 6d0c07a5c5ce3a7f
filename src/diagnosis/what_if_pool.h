// The what-if's DataLoader pool: the loader finding the un-profiled replay adds or restates where a
// worker pool sets the step, and what the report says where the trace's steps do not give the pool's
// period (analysis/replay/replay.h LoaderPool).
#pragma once
#include <optional>

#include "analysis/replay/replay.h"
#include "diagnosis/diagnosis.h"
#include "diagnosis/thresholds.h"

namespace gpudoctor {

// Where a DataLoader pool sets the un-profiled step without the steps giving its period, says so in `w`.
void notePoolPeriod(const ReplayModel& model, const ReplayEdits& unprofiled, StepWhatIf& w);

// Where a DataLoader pool sets the un-profiled step but the trace's GPU idle inside next() stayed under
// the io_wait_max threshold, adds the loader finding from the replay of the un-profiled job (see the
// definition). Returns that replay where it ran one, for predictFixes to use rather than run again.
std::optional<Replay> addPoolFinding(Diagnosis& d, const ReplayModel& model, const ReplayEdits& unprofiled,
                                     const Thresholds& th);

// Where a DataLoader pool sets the un-profiled step, restates the loader finding's bound on that step's
// basis (an estimate, not a bound, where the pool's period is not identified).
void restateLoaderBound(Diagnosis& d);

}  // namespace gpudoctor
