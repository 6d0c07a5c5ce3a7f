// The HTML page's many-rank parts: the cross-rank section, the ranks analyzed in full, and the
// streaming mode's page when no trace could be read in full (summaries only).
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/fleet_report.h"
#include "report/html_parts.h"
#include "report/html_report.h"

namespace gpudoctor {

namespace {

std::string groupsTable(const FleetReport& f) {
  if (f.groups.empty()) return "";
  std::vector<const FleetGroup*> g;
  for (const auto& x : f.groups) g.push_back(&x);
  std::stable_sort(g.begin(), g.end(), [](auto* a, auto* b) { return a->wait_fraction > b->wait_fraction; });
  constexpr size_t kMaxGroups = 32;
  std::string o =
      "<div class=wrap><table id=fleet-groups><tr><th>group</th><th>description</th><th>members</th><th>matched</th>"
      "<th>waiting</th><th>verdict</th></tr>";
  for (size_t k = 0; k < g.size() && k < kMaxGroups; ++k)
    o += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1f}%</td><td>{}</td></tr>",
                     htmlEscape(g[k]->name), htmlEscape(g[k]->desc), g[k]->members, g[k]->matched,
                     100 * g[k]->wait_fraction, htmlEscape(g[k]->note));
  o += "</table></div>";
  if (g.size() > kMaxGroups)
    o += fmt::format("<p><small>{} more groups (--json lists them all)</small></p>", g.size() - kMaxGroups);
  return o;
}

std::string slowestRanksTable(const FleetReport& f) {
  if (f.rows.size() < 2) return "";
  std::vector<const FleetRank*> r;
  for (const auto& x : f.rows) r.push_back(&x);
  std::stable_sort(r.begin(), r.end(), [](auto* a, auto* b) { return a->own_ns > b->own_ns; });
  constexpr size_t kRows = 16;
  std::string o = fmt::format(
      "<p>{} by own time per step:</p><table id=fleet-ranks><tr><th>rank</th><th>steps</th><th>step ms</th>"
      "<th>own ms</th><th>waiting ms</th></tr>",
      r.size() > kRows ? fmt::format("The slowest {} of {} ranks", kRows, r.size()) : std::string("Ranks"));
  for (size_t k = 0; k < r.size() && k < kRows; ++k)
    o += fmt::format("<tr><td>{}</td><td>{}</td><td>{:.3f}</td><td>{:.3f}</td><td>{:.3f}</td></tr>", r[k]->rank,
                     r[k]->steps, htmlMs(r[k]->wall_ns), htmlMs(r[k]->own_ns), htmlMs(r[k]->wait_ns));
  return o + "</table>";
}

}  // namespace

std::string htmlEscape(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

std::string fleetHtml(const FleetReport& f) {
  std::string o = fmt::format(
      "<h2 id=across-ranks>Across ranks</h2><p>{} ranks{}, {} steps, mean step {:.3f} ms (median {:.3f} ms). Own "
      "time = step time minus waiting for other ranks in collectives.</p><ul id=fleet-verdicts>",
      f.ranks, f.world_size > 0 ? fmt::format(" of {}", f.world_size) : std::string(), f.rank_steps, htmlMs(f.step_ns),
      htmlMs(f.median_step_ns));
  for (const auto& v : fleetVerdicts(f)) o += "<li>" + htmlEscape(v) + "</li>";
  return o + "</ul>" + groupsTable(f) + slowestRanksTable(f);
}

std::string focusHtml(const std::vector<FocusRank>& focus) {
  if (focus.empty()) return "";
  const std::string note = needsTracesNote(focus);
  std::string o = note.empty() ? "<h2>Analyzed in full</h2><p>The findings and the plan below are those of these "
                                 "ranks, read from their traces and diagnosed as one run:</p>"
                               : "<h2>Findings need the traces</h2><p>" + htmlEscape(note) + ".</p>";
  o += "<ul id=analyzed-in-full>";
  for (const auto& r : focus) {
    std::string line = fmt::format("rank {}: {}", r.rank, fmt::join(r.why, "; "));
    if (!r.analyzed)
      line += note.empty() ? "; not analyzed: only its summary was given (pass its trace, " + r.path + ")"
                           : " (" + r.path + ")";
    o += "<li>" + htmlEscape(line) + "</li>";
  }
  return o + "</ul>";
}

std::string renderFleetHtml(const FleetReport& f, const std::vector<FocusRank>& focus) {
  std::string o = htmlPageStart();
  o += fmt::format("<h1>gpudoctor: {} ranks, mean step {:.2f} ms</h1>", f.ranks, htmlMs(f.step_ns));
  o += focusHtml(focus);
  if (!f.notes.empty()) {
    o += "<ul id=trace-notes>";
    for (const auto& n : f.notes) o += "<li>" + htmlEscape(n) + "</li>";
    o += "</ul>";
  }
  o += fleetHtml(f);
  if (!f.classes.empty()) {
    int64_t total = 0;
    for (const auto& c : f.classes) total += c.total_ns;
    o += "<h2>Kernel classes, all ranks (share of kernel time)</h2><table id=fleet-classes><tr><th>class</th>"
         "<th>share</th><th>kernels</th></tr>";
    for (const auto& c : f.classes)
      o += fmt::format("<tr><td>{}</td><td>{:.1f}%</td><td>{}</td></tr>", htmlEscape(c.name),
                       total ? 100.0 * static_cast<double>(c.total_ns) / static_cast<double>(total) : 0.0, c.count);
    o += "</table>";
  }
  return o + htmlPageEnd();
}

}  // namespace gpudoctor
