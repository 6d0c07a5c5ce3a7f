// The "fleet" JSON object (report-internal: json_report and fleet_report share it).
#pragma once
#include <nlohmann/json.hpp>

#include "analysis/fleet.h"

namespace gpudoctor {

nlohmann::ordered_json fleetObject(const FleetReport& f);

}  // namespace gpudoctor
