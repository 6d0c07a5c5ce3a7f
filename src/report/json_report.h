// JSON rendering of an analysis: every figure, in nanoseconds and bytes, with the definitions used,
// for scripts and for later tools (diagnosis, HTML). Computes nothing.
#pragma once
#include <string>

#include "analysis/efficiency.h"
#include "analysis/fleet.h"
#include "analysis/run_analysis.h"
#include "diagnosis/diagnosis.h"

namespace gpudoctor {

// The report as a JSON document (pretty-printed); with the diagnosis and the efficiency against
// measured ceilings (analyze --ceilings) and the cross-rank analyses ("fleet") when given.
std::string renderJson(const RunAnalysis& run, double read_seconds, const Diagnosis* diagnosis = nullptr,
                       const Thresholds* thresholds = nullptr, const Efficiency* efficiency = nullptr,
                       const FleetReport* fleet = nullptr);

// Definitions of every breakdown figure, as written in docs/reference/analyze.md; also embedded in the JSON.
const char* const* breakdownDefinitions();

}  // namespace gpudoctor
