// Renders a comparison (analysis/compare): the terminal text (100 columns) and the JSON document.
#pragma once
#include <string>

#include "analysis/compare.h"

namespace gpudoctor {

struct CompareLabels {
  std::string base, next;          // the sides as the user named them
  double fail_if_slower_pct = -1;  // the gate, when set
};

// The terminal text; `color`: headings in ANSI bold, the verdict red when slower and green when faster,
// warnings yellow (report/style.h), the layout unchanged.
std::string renderCompareTerminal(const CompareResult& r, const CompareLabels& l, bool color = false);
std::string renderCompareJson(const CompareResult& r, const CompareLabels& l);
// A self-contained HTML page: the two steps as stacked bars (traced, and un-profiled when known),
// the category deltas, the kernels and job changes.
std::string renderCompareHtml(const CompareResult& r, const CompareLabels& l);

}  // namespace gpudoctor
