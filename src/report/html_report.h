// One self-contained HTML file (no network, no CDN): findings, checklist and inline SVG charts
// (per-rank stacked breakdown, a step timeline excerpt, kernel-class shares, collectives), and the
// cross-rank section. Computes nothing beyond layout.
#pragma once
#include <string>
#include <vector>

#include "analysis/fleet.h"
#include "analysis/fleet_focus.h"
#include "analysis/run_analysis.h"
#include "diagnosis/diagnosis.h"

namespace gpudoctor {

// The many-rank parts of a page.
struct HtmlFleet {
  const FleetReport* fleet = nullptr;             // the "Across ranks" section; null: none
  const std::vector<FocusRank>* focus = nullptr;  // the streaming mode: `run` holds the ranks analyzed in full
};

// The report as an HTML document.
std::string renderHtml(const RunAnalysis& run, const Diagnosis& d, const HtmlFleet& fleet = {});

// The streaming mode's page when no rank could be read in full (summaries only): which traces the
// findings need, the cross-rank section, the kernel classes.
std::string renderFleetHtml(const FleetReport& f, const std::vector<FocusRank>& focus);

}  // namespace gpudoctor
