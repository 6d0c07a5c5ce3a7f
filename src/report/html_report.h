// One self-contained HTML file (no network, no CDN): findings, checklist and inline SVG charts
// (per-rank stacked breakdown, a step timeline excerpt, kernel-class shares, collectives).
// Computes nothing beyond layout.
#pragma once
#include <string>

#include "analysis/run_analysis.h"
#include "diagnosis/diagnosis.h"

namespace gpudoctor {

// The report as an HTML document.
std::string renderHtml(const RunAnalysis& run, const Diagnosis& d);

}  // namespace gpudoctor
