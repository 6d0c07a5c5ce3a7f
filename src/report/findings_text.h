// Terminal rendering of a diagnosis: findings (ranked, with evidence, gain, fix and the replay's
// prediction), the plan, and the checklist. Computes nothing.
#pragma once
#include <string>

#include "diagnosis/diagnosis.h"

namespace gpudoctor {

// The findings section (at most `max` findings; 0 = all), led by the un-profiled step and followed by
// the plan (never truncated). The findings by severity (critical, warning, info), each class in the
// diagnosis's order; a finding's code lines as an indented block that pastes as it is. `color`: the
// headings and severities in ANSI colour (report/style.h), the layout unchanged.
std::string renderFindings(const Diagnosis& d, size_t max, bool color = false);
// The checklist table (`color`: failed items red, passed green).
std::string renderChecklist(const Diagnosis& d, bool color = false);

}  // namespace gpudoctor
