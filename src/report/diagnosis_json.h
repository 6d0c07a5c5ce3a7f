// The "diagnosis" JSON object (report-internal: the per-rank document and the streaming mode's
// share it, so both carry the same findings and plan).
#pragma once
#include <nlohmann/json.hpp>

#include "diagnosis/diagnosis.h"
#include "diagnosis/thresholds.h"

namespace gpudoctor {

// Ranking, findings, checklist, the what-if, the plan, the step compare judges; the thresholds in
// force when given.
nlohmann::ordered_json diagnosisJson(const Diagnosis& d, const Thresholds* thresholds);

}  // namespace gpudoctor
