// JSON rendering of an analysis: every figure, in nanoseconds and bytes, with the definitions used,
// for scripts and for later tools (diagnosis, HTML). Computes nothing.
#pragma once
#include <string>

#include "analysis/run_analysis.h"

namespace gpudoctor {

// The report as a JSON document (pretty-printed).
std::string renderJson(const RunAnalysis& run, double read_seconds);

// Definitions of every breakdown figure, as written in the README; also embedded in the JSON.
const char* const* breakdownDefinitions();

}  // namespace gpudoctor
