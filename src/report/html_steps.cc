// The page's step views: each shown rank's steps as stacked bars of the terminal's parts (the same
// windows and numbers as its "Steps of rank" table), and every rank's step time, step by step.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "report/html_parts.h"
#include "report/step_notes.h"

namespace gpudoctor {

namespace {

using std::size_t;

// A chart draws at most this many steps (a bar each); the table below it lists them all.
constexpr size_t kMaxStepBars = 240;

// One rank's steps as stacked bars, labelled #N as the terminal does. Each bar carries its figures
// in data-* attributes (nanoseconds, as analyze --json has them) and a tooltip in ms.
std::string stepBars(const RankAnalysis& r, const std::string& id) {
  const int W = 900, H = 272, left = 56, top = 26, bottom = 40;
  const size_t n = std::min(r.steps.size(), kMaxStepBars);
  double max_ms = 0;
  for (size_t k = 0; k < n; ++k) max_ms = std::max(max_ms, htmlMs(static_cast<double>(r.steps[k].wall_ns)));
  if (max_ms > 0) max_ms = tickStep(max_ms) * std::ceil(max_ms / tickStep(max_ms));
  const double pw = W - left - 20, ph = H - top - bottom, slot = pw / std::max<size_t>(1, n);
  const double bar = std::max(1.0, std::min(60.0, slot * 0.8));
  std::string o =
      fmt::format("<svg id='{0}' class=chart viewBox='0 0 {1} {2}' width={1} height={2} role=img>", id, W, H);
  o += yAxis(left, left + pw, top, ph, max_ms, "ms");
  const size_t every = static_cast<size_t>(std::ceil(static_cast<double>(n) / 24.0));
  for (size_t k = 0; k < n; ++k) {
    const StepBreakdown& b = r.steps[k];
    const auto v = stepPartValues(b);
    const double x = left + slot * static_cast<double>(k) + (slot - bar) / 2;
    o += fmt::format(
        "<g class=step data-step={} data-wall-ns={} data-compute-ns={} data-comm-exposed-ns={} "
        "data-copy-exposed-ns={} data-idle-host-ns={} data-idle-sync-ns={} data-idle-dependency-ns={} "
        "data-idle-other-ns={}><title>step {}: {:.3f} ms",
        b.window.number, b.wall_ns, v[0], v[1], v[2], v[3], v[4], v[5], v[6], stepLabel(b.window),
        htmlMs(static_cast<double>(b.wall_ns)));
    for (int i = 0; i < kStepPartCount; ++i)
      if (v[i] > 0) o += fmt::format("&#10;{}: {:.3f} ms", kStepParts[i].name, htmlMs(static_cast<double>(v[i])));
    o += "</title>";
    double y = top + ph;
    for (int i = 0; i < kStepPartCount; ++i) {
      const double h = max_ms > 0 ? htmlMs(static_cast<double>(v[i])) / max_ms * ph : 0;
      if (h <= 0) continue;
      y -= h;
      o += fmt::format("<rect x={:.1f} y={:.1f} width={:.1f} height={:.1f} fill='{}'/>", x, y, bar, h,
                       kStepParts[i].color);
    }
    o += "</g>";
    if (k % every == 0)
      o += fmt::format("<text x={:.1f} y={} class=tick text-anchor=middle>{}</text>", x + bar / 2, top + ph + 14,
                       stepLabel(b.window));
  }
  o += fmt::format("<text x={:.1f} y={} class=tick text-anchor=middle>step (ProfilerStep#N)</text>", left + pw / 2,
                   H - 6);
  return o + "</svg>";
}

// The numbers of the bars, as the terminal's "Steps of rank" table prints them.
std::string stepTable(const RankAnalysis& r) {
  std::string o = fmt::format(
      "<details><summary>The numbers ({} step{}, ms)</summary><div class=wrap><table class=steps "
      "id=steps-table-{}><tr><th>step</th><th>wall</th><th>busy</th><th>compute</th><th>NCCL</th><th>exposed</th>"
      "<th>copies</th><th>idle</th><th>host</th><th>sync</th><th>depend</th><th>other</th></tr>",
      r.steps.size(), r.steps.size() == 1 ? "" : "s", r.trace->rank);
  auto row = [&](const std::string& label, const StepBreakdown& b) {
    o += fmt::format(
        "<tr><td>{}</td><td>{:.3f}</td><td>{:.3f}</td><td>{:.3f}</td><td>{:.3f}</td><td>{:.3f}</td><td>{:.3f}</td>"
        "<td>{:.3f}</td><td>{:.3f}</td><td>{:.3f}</td><td>{:.3f}</td><td>{:.3f}</td></tr>",
        label, htmlMs(b.wall_ns), htmlMs(b.gpu_busy_ns), htmlMs(b.compute_ns), htmlMs(b.comm_ns),
        htmlMs(b.comm_exposed_ns), htmlMs(b.copy_exposed_ns), htmlMs(b.idle_ns), htmlMs(b.idle_host_ns),
        htmlMs(b.idle_sync_ns), htmlMs(b.idle_dependency_ns), htmlMs(b.idle_other_ns));
  };
  for (const auto& b : r.steps) row(stepLabel(b.window), b);
  if (r.steps.size() > 1) row("total", r.total);
  return o + "</table></div></details>";
}

// Step time of every step, one line per rank (up to 16 ranks; beyond, the fastest, median and
// slowest rank of each step), against the step's number, with a legend.
std::string trendChart(const RunAnalysis& run) {
  const int W = 900, H = 232, left = 60, top = 26, bottom = 40;
  size_t steps = 0, longest = 0;
  double max_ms = 0;
  for (size_t i = 0; i < run.ranks.size(); ++i) {
    if (run.ranks[i].steps.size() > steps) steps = run.ranks[i].steps.size(), longest = i;
    for (const auto& b : run.ranks[i].steps) max_ms = std::max(max_ms, htmlMs(b.wall_ns));
  }
  if (steps < 2 || !(max_ms > 0)) return {};
  max_ms = tickStep(max_ms) * std::ceil(max_ms / tickStep(max_ms));
  const double pw = W - left - 40, ph = H - top - bottom;
  auto xOf = [&](size_t k) { return left + pw * static_cast<double>(k) / static_cast<double>(steps - 1); };
  auto yOf = [&](double v) { return top + ph * (1 - v / max_ms); };
  std::string o =
      fmt::format("<svg id='chart-trend' class=chart viewBox='0 0 {0} {1}' width={0} height={1} role=img>", W, H);
  o += yAxis(left, left + pw, top, ph, max_ms, "ms");
  const auto& labels = run.ranks[longest].steps;
  const size_t every = static_cast<size_t>(std::ceil(static_cast<double>(steps) / 16.0));
  for (size_t k = 0; k < steps; k += every)
    o += fmt::format("<text x={:.1f} y={} class=tick text-anchor=middle>{}</text>", xOf(k), H - bottom + 14,
                     stepLabel(labels[k].window));
  o += fmt::format("<text x={:.1f} y={} class=tick text-anchor=middle>step (ProfilerStep#N)</text>", left + pw / 2,
                   H - 6);
  static constexpr const char* kColors[] = {"#1971c2", "#e8590c", "#2b8a3e", "#862e9c",
                                            "#c92a2a", "#0c8599", "#f08c00", "#495057"};
  std::vector<std::pair<std::string, std::string>> legend;
  auto line = [&](const std::vector<double>& v, const char* color, bool dashed, const std::string& name) {
    std::string pts;
    for (size_t k = 0; k < v.size(); ++k) pts += fmt::format("{:.1f},{:.1f} ", xOf(k), yOf(v[k]));
    o += fmt::format("<polyline points='{}' fill=none stroke='{}' stroke-width=1.5{}><title>{}</title></polyline>", pts,
                     color, dashed ? " stroke-dasharray='5,3'" : "", htmlEscape(name));
    legend.emplace_back(name, fmt::format("2px {} {}", dashed ? "dashed" : "solid", color));
  };
  if (run.ranks.size() <= 16) {
    for (size_t i = 0; i < run.ranks.size(); ++i) {
      std::vector<double> v;
      for (const auto& b : run.ranks[i].steps) v.push_back(htmlMs(b.wall_ns));
      line(v, kColors[i % 8], i >= 8, fmt::format("rank {}", run.ranks[i].trace->rank));
    }
  } else {
    std::vector<double> lo(steps), mid(steps), hi(steps);
    for (size_t k = 0; k < steps; ++k) {
      std::vector<double> v;
      for (const auto& r : run.ranks)
        if (k < r.steps.size()) v.push_back(htmlMs(r.steps[k].wall_ns));
      std::sort(v.begin(), v.end());
      lo[k] = v.front(), mid[k] = v[v.size() / 2], hi[k] = v.back();
    }
    line(lo, "#2b8a3e", false, "fastest rank");
    line(mid, "#1971c2", false, "median rank");
    line(hi, "#c92a2a", false, "slowest rank");
  }
  return o + "</svg>" + htmlLegend(legend, true);
}

}  // namespace

std::string stepsHtml(const RunAnalysis& run) {
  std::string o =
      "<h2>Steps (per-step breakdown)</h2><p>Each bar is one step of one rank, split into the parts of its wall "
      "time, as the terminal's \"Steps of rank\" table lists them: the step's window runs from its ProfilerStep#N "
      "start to the next one's (docs/reference/analyze.md, Definitions).</p>";
  std::vector<std::pair<std::string, std::string>> menu;
  std::string views;
  for (size_t i : shownRanks(run)) {
    const RankAnalysis& r = run.ranks[i];
    if (r.steps.empty()) continue;
    std::string id = fmt::format("steps-{}", r.trace->rank);
    menu.emplace_back(id, fmt::format("rank {} ({} steps)", r.trace->rank, r.steps.size()));
    views += fmt::format("<div id='{}' data-group=steps{}>", id, views.empty() ? "" : " style='display:none'");
    views += stepBars(r, "chart-steps-" + std::to_string(r.trace->rank)) + stepPartsLegend();
    if (r.steps.size() > kMaxStepBars)
      views += fmt::format("<p><small>The chart draws the first {} of {} steps; the table lists them all.</small></p>",
                           kMaxStepBars, r.steps.size());
    views += stepTable(r);
    if (const std::string ahead = hostAheadNote(r); !ahead.empty())
      views += "<p><small>" + htmlEscape(ahead) + "</small></p>";
    views += "</div>";
  }
  if (menu.size() > 1) o += "<p>" + pickMenu("steps-pick", "steps", menu) + "</p>";
  o += views;
  if (std::string t = trendChart(run); !t.empty()) o += "<h2>Step time, step by step</h2>" + t;
  return o;
}

}  // namespace gpudoctor
