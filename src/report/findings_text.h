// Terminal rendering of a diagnosis: findings (ranked, with evidence, gain, fix and the replay's
// prediction), the plan, and the checklist. Computes nothing.
#pragma once
#include <string>

#include "diagnosis/diagnosis.h"

namespace gpudoctor {

// The findings section (at most `max` findings; 0 = all), led by the un-profiled step and followed by
// the plan (never truncated). The findings by severity (critical, warning, info), each class in the
// diagnosis's order; a finding's code lines as an indented block that pastes as it is.
std::string renderFindings(const Diagnosis& d, size_t max);
// The checklist table.
std::string renderChecklist(const Diagnosis& d);

}  // namespace gpudoctor
