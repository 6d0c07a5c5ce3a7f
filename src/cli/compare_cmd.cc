// `gpudoctor compare BASE NEW`: what changed between two runs. The work is in analysis/compare.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "analysis/compare.h"
#include "analysis/run_analysis.h"
#include "cli/color_option.h"
#include "cli/commands.h"
#include "cli/json_output.h"
#include "cli/usage.h"
#include "common/atomic_file.h"
#include "diagnosis/diagnosis.h"
#include "diagnosis/what_if.h"
#include "report/compare_report.h"
#include "sources/analyze_json/analyze_json_reader.h"
#include "sources/trace_set.h"

namespace gpudoctor::cli {

namespace {

struct CompareArgs {
  std::string base, next, steps = "all", json, html, color = "auto";
  double fail_if_slower = -1;
  bool quiet = false, no_what_if = false;
  unsigned threads = 0;
};

// One side: a saved analyze --json document, or traces (a file or a directory of ranks) analyzed here.
Result<RunSummary> loadSide(const std::string& path, const CompareArgs& a, const StepSelection& sel) {
  if (looksLikeAnalyzeJson(path)) {
    auto s = readAnalyzeJson(path);
    if (s.ok() && a.no_what_if) {  // judged on the traced steps, as a trace side is
      s.value().unprofiled_step_ns = s.value().traced_step_ns = -1;
      s.value().unprofiled_path.clear();
    }
    return s;
  }
  auto files = expandTracePaths({path});
  if (!files.ok()) return files.error();
  ReadSetOptions ro;
  ro.threads = a.threads;
  auto traces = readTraceSet(files.value(), ro);
  if (!traces.ok()) return traces.error();
  const Thresholds th = Thresholds::defaults();
  AnalysisOptions opt;
  opt.steps = sel;
  opt.threads = a.threads;
  configureAnalysis(th, opt);
  auto run = analyzeRun(traces.value(), opt);
  if (!run.ok()) return run.error();
  double unprofiled = -1, traced = -1;
  std::vector<std::pair<std::string, double>> critical_path;
  if (!a.no_what_if) {
    // The step alone, as analyze --json keeps it (diagnosis.step_estimate): the same figures whether
    // a side is a trace or a saved document.
    const StepWhatIf e = estimateStep(run.value());
    if (e.available)
      unprofiled = static_cast<double>(e.unprofiled_step_ns), traced = static_cast<double>(e.traced_step_ns),
      critical_path = e.unprofiled_path;
  }
  RunSummary s = summarizeRun(run.value(), unprofiled, std::move(critical_path), traced);
  s.source = path;
  return s;
}

int runCompare(const CompareArgs& a) {
  if (a.fail_if_slower != -1 && !(a.fail_if_slower >= 0 && a.fail_if_slower <= 1000))
    return fail("--fail-if-slower " + std::to_string(a.fail_if_slower) + ": expected a percentage from 0 to 1000",
                kUsage);
  if (std::string e = oneStdout({{"--json", a.json}, {"--html", a.html}}); !e.empty()) return fail(e, kUsage);
  auto sel = StepSelection::parse(a.steps);
  if (!sel.ok()) return fail(sel.error().message, kUsage);
  for (const std::string* side : {&a.base, &a.next})
    if (a.steps != "all" && looksLikeAnalyzeJson(*side))
      return fail(*side + ": --steps cannot select steps of a saved analyze document", kUsage);
  // An unreadable side, different rank counts, no steps, another tool's JSON: bad input (3).
  auto base = loadSide(a.base, a, sel.value());
  if (!base.ok()) return fail(base.error().message);
  auto next = loadSide(a.next, a, sel.value());
  if (!next.ok()) return fail(next.error().message);
  auto r = compareRuns(base.value(), next.value());
  if (!r.ok()) return fail(r.error().message);
  CompareLabels labels{a.base, a.next, a.fail_if_slower};
  if (!a.json.empty()) {
    if (std::string e = writeDocument(a.json, renderCompareJson(r.value(), labels)); !e.empty()) return fail(e);
  }
  if (!a.html.empty())
    if (std::string e = writeDocument(a.html, renderCompareHtml(r.value(), labels)); !e.empty()) return fail(e);
  if (a.json != "-" && a.html != "-") {
    std::string text = renderCompareTerminal(r.value(), labels, colorForStdout(a.color));
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  if (a.fail_if_slower >= 0 && slowerThan(r.value(), a.fail_if_slower)) {
    if (!a.quiet)
      std::fprintf(stderr,
                   "gpudoctor: compare: %s is %.1f %% slower than %s, beyond the %.1f %% noise band and the "
                   "%.1f %% allowed\n",
                   a.next.c_str(), 100 * r.value().change, a.base.c_str(), 100 * r.value().band, a.fail_if_slower);
    return kGateFailed;
  }
  return kOk;
}

}  // namespace

std::function<int()> addCompare(CLI::App& app) {
  auto a = std::make_shared<CompareArgs>();
  auto* cmd = app.add_subcommand(
      "compare",
      "What changed between two runs of a job, and why the step got slower or faster: the step delta split "
      "exactly into compute, communication, host launch, input, sync, copies and other idle; the kernel classes, "
      "kernels and collectives that moved most; the job profile's differences as the likely causes; a verdict "
      "with a confidence range on the speedup; a warning when the runs look like different jobs.\n\n"
      "Each side is a trace file, a directory of per-rank traces, or a saved `gpudoctor analyze --json` document "
      "(keep a baseline as one small file; with or without --no-what-if, it gives the same verdict as its trace). "
      "The verdict is on the un-profiled steady-state step the replay estimates (the profiler's inflation varies "
      "between runs), on both sides, else on the traced step. \"faster\" and \"slower\" mean the whole range is "
      "beyond 1x: the band adds each side's step-to-step noise (median/MAD, warm-up and stalled steps left out) "
      "and how far the estimates are typically off.\n\n"
      "Examples:\n"
      "  gpudoctor compare before/ after/\n"
      "  gpudoctor analyze runs/base --json base.json      # a baseline, once\n"
      "  gpudoctor compare base.json runs/new --fail-if-slower 3   # a CI gate\n"
      "  gpudoctor compare a.pt.trace.json.gz b.pt.trace.json.gz --json -\n\n"
      "Exit status 1: --fail-if-slower is given and NEW is slower by more than that beyond the noise band; 3: an "
      "unreadable side, different rank counts, no steps, another tool's JSON.");
  cmd->add_option("base", a->base, "The baseline: trace file, directory of rank traces, or analyze --json document")
      ->required();
  cmd->add_option("new", a->next, "The run to judge against it (same kinds)")->required();
  cmd->add_option("--steps", a->steps, "Steps to use on trace sides, as analyze's --steps (default all)");
  addJsonOption(cmd, &a->json, "the comparison");
  cmd->add_option("--html", a->html,
                  "Also write a self-contained HTML page: the steps side by side, the largest deltas "
                  "('-': the page alone, on stdout)")
      ->type_name("FILE|-");
  cmd->add_option("--fail-if-slower", a->fail_if_slower,
                  "Exit 1 when NEW is slower than BASE by more than PCT percent beyond the noise band (a CI gate)")
      ->check(nonNegative());
  cmd->add_flag("--no-what-if", a->no_what_if,
                "Judge the traced steps on both sides, without the replay's un-profiled estimate (also a saved "
                "document's)");
  cmd->add_option("--threads", a->threads, "Parser threads (default: one per core)")->check(wholeNumber());
  addQuiet(cmd, &a->quiet);  // also: no message on stderr when the gate fails
  addColorOption(cmd, &a->color);
  return [a] { return runCompare(*a); };
}

}  // namespace gpudoctor::cli
