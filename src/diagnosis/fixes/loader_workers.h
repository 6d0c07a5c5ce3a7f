// The DataLoader pool edit that the loader_workers fix and its 4x alternative share.
#pragma once
#include <string>

#include "diagnosis/fixes/fix.h"

namespace gpudoctor {

// A worker pool that sets the step (edits.loader_period_ns > 0, from the un-profiled edits) gets
// `factor` times its workers: its period / factor. False where no pool sets the step.
bool morePoolWorkers(const RunAnalysis* run, double factor, ReplayEdits& edits, std::string& basis);

}  // namespace gpudoctor
