// Sentences about a rank's step windows that the terminal and the HTML reports both print.
#pragma once
#include <string>

#include "analysis/run_analysis.h"

namespace gpudoctor {

// Where the host ran ahead of the GPU (the last window at least twice the others' median, the median
// launch latency longer than that median), a sentence saying that the rank's windows show the host's
// period and the last one the GPU's backlog; else empty.
std::string hostAheadNote(const RankAnalysis& r);

}  // namespace gpudoctor
