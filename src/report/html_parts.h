// What the HTML pages share (report-internal: the html_*.cc files): escaping, the page's opening
// (styles) and end (footer, script), chart helpers, and the page's sections one file each.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/fleet.h"
#include "analysis/fleet_focus.h"
#include "analysis/run_analysis.h"

namespace gpudoctor {

// `s` with & < > " as entities.
std::string htmlEscape(std::string_view s);

// The document up to <body> (title, styles), and from the footer to </html>.
std::string htmlPageStart();
std::string htmlPageEnd();

// Milliseconds of nanoseconds.
inline double htmlMs(double ns) { return ns / 1e6; }

// The parts of a step's wall time, as the terminal's "Steps of rank" table splits it: compute,
// exposed NCCL, copies (no kernel running), then idle by cause (host, sync, dependency, other).
struct HtmlPart {
  const char* name;
  const char* color;
};
inline constexpr int kStepPartCount = 7;
extern const HtmlPart kStepParts[kStepPartCount];
// A breakdown's values of those parts (ns); they sum to its wall time.
std::array<int64_t, kStepPartCount> stepPartValues(const StepBreakdown& b);
// The legend of the step parts.
std::string stepPartsLegend();
// A legend of coloured swatches (name, CSS colour); `dashed` draws them as lines.
std::string htmlLegend(const std::vector<std::pair<std::string, std::string>>& items, bool lines = false);

// A step of 1, 2 or 5 x 10^k giving 4-8 ticks up to `max`; a tick's label with the digits it needs.
double tickStep(double max);
std::string tickLabel(double v, double step);
// A horizontal axis at y from x0 (value 0) to x0 + width (value max): ticks, grid lines up to
// `grid_top`, labels, and the unit after the last label.
std::string xAxis(double x0, double width, double max, int y, int grid_top, const char* unit);
// A vertical axis at x = left from y = top + height (value 0) up to top (value max), grid lines to
// `right`, the unit above the labels.
std::string yAxis(double left, double right, double top, double height, double max, const char* unit);

// A step's name as the terminal prints it: "#N" (the N of ProfilerStep#N), "all" without steps.
std::string stepLabel(const StepWindow& w);

// The ranks whose own views the page carries (a bounded set, so a 1,000-rank page stays small):
// up to 8 indices into run.ranks (rank 0, the straggler, the slowest and fastest by mean step, then
// in rank order), in rank order. The first is the terminal's default rank.
std::vector<size_t> shownRanks(const RunAnalysis& run);

// A menu that shows one of the elements of `group` (by id) at a time.
std::string pickMenu(const std::string& id, const std::string& group,
                     const std::vector<std::pair<std::string, std::string>>& options);

// The page's sections (one file each: html_steps, html_operators, html_memory, html_host).
// Per-step stacked breakdown of the shown ranks and the step-time trend of all ranks.
std::string stepsHtml(const RunAnalysis& run);
// Which framework operators cost most on the host and on the GPU (at most 30).
std::string operatorsHtml(const RunAnalysis& run);
// Allocated GPU memory over the steps where the traces have memory events, else a note.
std::string memoryHtml(const RunAnalysis& run);
// The host side: DataLoader, optimizer, syncs, own work, launch latency, copies.
std::string hostSideHtml(const RunAnalysis& run);

// "Across ranks": the cross-rank verdicts, the process groups and the slowest ranks by own time.
std::string fleetHtml(const FleetReport& f);

// The ranks analyzed in full and why (those given only as summaries: which trace to pass).
std::string focusHtml(const std::vector<FocusRank>& focus);

}  // namespace gpudoctor
