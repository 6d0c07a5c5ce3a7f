#include "cli/fleet_answer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/color_option.h"
#include "cli/commands.h"
#include "cli/json_output.h"
#include "report/html_report.h"
#include "sources/trace_set.h"

namespace gpudoctor::cli {

namespace {

// "" when every rank of the job has a digest (or --allow-missing-ranks); else the error.
std::string missingRanksError(const std::vector<RankDigest>& digests, bool allow_missing) {
  auto missing = missingRanks(digests);
  if (missing.empty() || allow_missing) return "";
  std::string list;
  for (size_t k = 0; k < missing.size() && k < 8; ++k) list += (k ? ", " : "") + std::to_string(missing[k]);
  if (missing.size() > 8) list += fmt::format(", ... ({} in all)", missing.size());
  return fmt::format(
      "{} {} of the job's {} {} no trace or summary here; give every rank's file, or --allow-missing-ranks to "
      "analyze the {} present",
      missing.size() == 1 ? "rank" : "ranks", list, digests.size() + missing.size(),
      missing.size() == 1 ? "has" : "have", digests.size());
}

// The focus ranks' traces among `files` (not those known only from a summary), read at once.
Result<std::vector<RankTrace>> readFocusTraces(const std::vector<FocusRank>& focus,
                                               const std::vector<std::string>& files, unsigned threads, bool quiet) {
  const std::set<std::string> given(files.begin(), files.end());
  std::vector<std::string> paths;
  for (const auto& r : focus)
    if (given.count(r.path) && !isSummaryFile(r.path)) paths.push_back(r.path);
  if (paths.empty()) return std::vector<RankTrace>{};
  if (!quiet) {
    std::vector<std::string> what;
    for (const auto& r : focus) what.push_back(fmt::format("{} ({})", r.rank, fmt::join(r.reasons, ", ")));
    std::fprintf(stderr, "gpudoctor: reading ranks %s in full for findings and a plan\n",
                 fmt::format("{}", fmt::join(what, ", ")).c_str());
  }
  ReadSetOptions ro;
  ro.threads = threads;
  auto traces = readTraceSet(paths, ro);
  if (!traces.ok()) return traces.error();
  // Each rank as the streaming pass numbered it (distributedInfo, else its place among all files).
  for (auto& t : traces.value())
    for (const auto& r : focus)
      if (r.path == t.path) t.rank = r.rank;
  std::sort(traces.value().begin(), traces.value().end(),
            [](const RankTrace& x, const RankTrace& y) { return x.rank < y.rank; });
  return traces;
}

}  // namespace

Result<std::unique_ptr<FleetAnswer>> answerFleet(const FleetReport& fleet, std::vector<FocusRank> focus,
                                                 const std::vector<std::string>& files, const FleetAnswerOptions& opt) {
  auto a = std::make_unique<FleetAnswer>();
  a->focus = std::move(focus);
  auto traces = readFocusTraces(a->focus, files, opt.analysis.threads, opt.quiet);
  if (!traces.ok()) return traces.error();
  a->traces = std::move(traces.value());
  if (a->traces.empty()) return a;
  AnalysisOptions aopt = opt.analysis;
  const bool whole_job = a->traces.size() == fleet.rows.size();
  aopt.chosen_ranks = !whole_job;
  auto run = analyzeRun(a->traces, aopt);
  if (!run.ok()) return run.error();
  a->run = std::move(run.value());
  if (!whole_job) a->run->straggler = stragglerOfGroups(fleet);
  a->diagnosis = diagnoseRun(*a->run, *opt.thresholds, {}, nullptr, opt.diagnose);
  for (auto& r : a->focus)
    for (const auto& t : a->traces) r.analyzed = r.analyzed || t.path == r.path;
  return a;
}

int reportFleet(const AnalyzeArgs& a, const std::vector<std::string>& files, FleetPass pass,
                const AnalysisOptions& aopt, const Thresholds& th) {
  std::vector<RankDigest>& digests = pass.digests;
  std::sort(digests.begin(), digests.end(), [](const RankDigest& x, const RankDigest& y) { return x.rank < y.rank; });
  if (std::string e = missingRanksError(digests, a.allow_missing); !e.empty()) return fail(e);
  auto fleet = analyzeFleet(digests);
  if (!fleet.ok()) return fail(fleet.error().message);
  FleetRunInfo& info = pass.info;
  info.ranks = static_cast<int64_t>(digests.size());
  info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - pass.start).count();
  if (!a.summary_out.empty())
    if (std::string e = writeSummary(a.summary_out, digests); !e.empty()) return fail(e);
  std::vector<FocusRank> focus = pickFocusRanks(fleet.value(), digests);
  // The digests are done with: the traces read in full and the reports reuse their memory.
  std::vector<RankDigest>().swap(digests);
  FleetAnswerOptions fo{aopt, &th, {.what_if = !a.no_what_if, .step_estimate = !a.json.empty()}, a.quiet};
  auto answer = answerFleet(fleet.value(), std::move(focus), files, fo);
  if (!answer.ok()) return fail(answer.error().message);
  const FleetAnswer& ans = *answer.value();
  info.peak_rss_bytes = std::max(info.peak_rss_bytes, peakRssBytes());
  FleetFindings ff{&ans.focus, ans.diagnosis ? &*ans.diagnosis : nullptr, &th, a.findings};
  if (!a.html.empty()) {
    std::string page = ans.run ? renderHtml(*ans.run, *ans.diagnosis, {&fleet.value(), &ans.focus})
                               : renderFleetHtml(fleet.value(), ans.focus);
    if (std::string e = writeDocument(a.html, page); !e.empty()) return fail(e);
  }
  if (!a.json.empty())
    if (std::string e = writeDocument(a.json, renderFleetJson(fleet.value(), info, ff)); !e.empty()) return fail(e);
  if (a.json == "-" || a.html == "-" || a.summary_out == "-") return kOk;  // a document alone on stdout
  std::string text = renderFleetReport(fleet.value(), info, colorForStdout(a.color), ff);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kOk;
}

std::function<void(const StreamProgress&)> streamProgress(bool tty) {
  auto start = std::chrono::steady_clock::now();
  auto last = std::make_shared<double>(0.0);
  return [start, last, tty](const StreamProgress& p) {
    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // Not a terminal: a line every ten seconds, and a last one only after those.
    if (!tty && (p.done == p.total ? *last == 0 : el - *last < 10)) return;
    *last = el;
    double mbs = el > 0 ? static_cast<double>(p.bytes) / 1e6 / el : 0;
    double eta = p.done ? el / static_cast<double>(p.done) * static_cast<double>(p.total - p.done) : 0;
    std::fprintf(stderr, "%sanalyzing: %zu/%zu files, %.1f MB/s, %.1f s, ETA %.0f s%s", tty ? "\r" : "", p.done,
                 p.total, mbs, el, eta, tty && p.done != p.total ? "   " : "\n");
  };
}

}  // namespace gpudoctor::cli
