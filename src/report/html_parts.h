// What the HTML pages share (report-internal: html_report and html_fleet): escaping, the page's
// opening (styles) and end (footer, script), and the many-rank sections.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "analysis/fleet.h"
#include "analysis/fleet_focus.h"

namespace gpudoctor {

// `s` with & < > " as entities.
std::string htmlEscape(std::string_view s);

// The document up to <body> (title, styles), and from the footer to </html>.
std::string htmlPageStart();
std::string htmlPageEnd();

// "Across ranks": the cross-rank verdicts, the process groups and the slowest ranks by own time.
std::string fleetHtml(const FleetReport& f);

// The ranks analyzed in full and why (those given only as summaries: which trace to pass).
std::string focusHtml(const std::vector<FocusRank>& focus);

}  // namespace gpudoctor
