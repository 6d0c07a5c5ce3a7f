// Rendering of `nccl log`: facts and findings as text (100 columns) or JSON. Computes nothing.
#pragma once
#include <string>
#include <vector>

#include "diagnosis/nccl_log_check.h"

namespace gpudoctor {

std::string renderNcclLogText(const NcclLogFacts& f, const std::vector<Finding>& findings);
std::string renderNcclLogJson(const NcclLogFacts& f, const std::vector<Finding>& findings);

}  // namespace gpudoctor
