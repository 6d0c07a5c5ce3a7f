// Terminal rendering of a diagnosis: findings (ranked, with evidence, gain and fix) and the
// checklist. Computes nothing.
#pragma once
#include <string>

#include "diagnosis/diagnosis.h"

namespace gpudoctor {

// The findings section (at most `max` findings; 0 = all).
std::string renderFindings(const Diagnosis& d, size_t max);
// The checklist table.
std::string renderChecklist(const Diagnosis& d);

}  // namespace gpudoctor
