// The streaming mode's JSON objects (report-internal: json_report, fleet_report and fleet_findings
// share them).
#pragma once
#include <nlohmann/json.hpp>

#include "analysis/fleet.h"
#include "report/fleet_report.h"

namespace gpudoctor {

nlohmann::ordered_json fleetObject(const FleetReport& f);

// "analyzed_in_full": the ranks picked, why, whether each was read in full, and the basis.
nlohmann::ordered_json focusObject(const FleetFindings& a);

}  // namespace gpudoctor
