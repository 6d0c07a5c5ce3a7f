// The streaming mode's answer in its reports: the ranks read in full and why, their findings and
// plan, or which traces the findings need.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/diagnosis_json.h"
#include "report/findings_text.h"
#include "report/fleet_json.h"
#include "report/fleet_report.h"
#include "report/style.h"
#include "report/text.h"

namespace gpudoctor {

namespace {

using nlohmann::ordered_json;

constexpr const char* kFocusBasis =
    "the slowest rank (the largest mean step), the median rank and the straggler the cross-rank analyses name "
    "(else their first slow rank), each once: their traces read in full and diagnosed as one run of those ranks, "
    "as analyze diagnoses up to 64 traces; the findings and the plan are theirs";

std::vector<const FocusRank*> analyzed(const FleetFindings& a, bool yes) {
  std::vector<const FocusRank*> out;
  for (const auto& r : *a.focus)
    if (r.analyzed == yes) out.push_back(&r);
  return out;
}

std::string rankList(const std::vector<const FocusRank*>& rs) {
  std::vector<int> ids;
  for (const auto* r : rs) ids.push_back(r->rank);
  return fmt::format("{} {}", ids.size() == 1 ? "rank" : "ranks", fmt::join(ids, ", "));
}

}  // namespace

std::string needsTracesNote(const std::vector<FocusRank>& focus) {
  std::vector<const FocusRank*> rs;
  for (const auto& r : focus) {
    if (r.analyzed) return "";
    rs.push_back(&r);
  }
  if (rs.empty()) return "";
  return fmt::format(
      "findings and a plan need the traces (summaries keep no events to diagnose): pass the traces of {}, or the "
      "job's traces with --stream",
      rankList(rs));
}

std::string renderFocusText(const FleetFindings& a, bool color) {
  if (!a.focus || a.focus->empty()) return "";
  const auto done = analyzed(a, true), missing = analyzed(a, false);
  std::string o = "\n";
  if (done.empty()) {  // summaries only: which traces to pass, and the command
    o += paint("Findings need the traces (summaries keep no events to diagnose); pass these ranks':", Tone::kHeading,
               color) +
         "\n";
    std::vector<std::string> paths;
    for (const auto* r : missing) {
      o += wrapText(fmt::format("rank {} ({}): {}", r->rank, r->path, fmt::join(r->why, "; ")), "  ", textWidth());
      paths.push_back(r->path);
    }
    return o + fmt::format("  gpudoctor analyze {}   # or the job's traces with --stream\n", fmt::join(paths, " "));
  }
  o += paint("Analyzed in full (the findings and the plan below are theirs)", Tone::kHeading, color) + "\n";
  for (const auto* r : done)
    o += wrapText(fmt::format("rank {}: {}", r->rank, fmt::join(r->why, "; ")), "  ", textWidth());
  for (const auto* r : missing)
    o += wrapText(fmt::format("rank {}: {}; not analyzed: only its summary was given (pass its trace, {})", r->rank,
                              fmt::join(r->why, "; "), r->path),
                  "  ", textWidth());
  if (a.diagnosis && a.max_findings > 0) o += "\n" + renderFindings(*a.diagnosis, a.max_findings, color);
  return o;
}

ordered_json focusObject(const FleetFindings& a) {
  ordered_json ranks = ordered_json::array();
  if (a.focus)
    for (const auto& r : *a.focus)
      ranks.push_back(
          {{"rank", r.rank}, {"path", r.path}, {"reasons", r.reasons}, {"why", r.why}, {"analyzed", r.analyzed}});
  return {{"basis", kFocusBasis}, {"ranks", ranks}, {"note", a.focus ? needsTracesNote(*a.focus) : std::string()}};
}

}  // namespace gpudoctor
