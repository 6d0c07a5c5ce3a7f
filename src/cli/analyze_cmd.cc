// `gpudoctor analyze PATH...`: read traces, measure, print. The work is in the library.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "analysis/efficiency.h"
#include "analysis/run_analysis.h"
#include "cli/analyze_args.h"
#include "cli/bundled_example.h"
#include "cli/color_option.h"
#include "cli/commands.h"
#include "cli/fleet_answer.h"
#include "cli/json_output.h"
#include "cli/mpi_world.h"
#include "cli/usage.h"
#include "common/atomic_file.h"
#include "diagnosis/diagnosis.h"
#include "diagnosis/what_if.h"
#include "pipeline/fleet_stream.h"
#include "pipeline/nccl_inputs.h"
#include "report/bench_gpu_report.h"
#include "report/findings_text.h"
#include "report/fleet_report.h"
#include "report/html_report.h"
#include "report/json_report.h"
#include "report/terminal.h"
#include "sources/ceilings_file/ceilings_file.h"
#include "sources/summary/digest_exchange.h"
#include "sources/trace_set.h"

namespace gpudoctor::cli {

namespace fs = std::filesystem;

namespace {

// True when a checklist item failed.
bool anyFailed(const Diagnosis& d) {
  for (const auto& c : d.checklist)
    if (c.status == CheckStatus::kFail) return true;
  return false;
}

// The analyze document with another "tool" name (the first key of the document).
std::string relabelTool(const std::string& json, const std::string& tool) {
  const std::string from = "\"tool\": \"gpudoctor analyze\"";
  size_t at = json.find(from);
  return at == std::string::npos ? json
                                 : json.substr(0, at) + "\"tool\": \"" + tool + "\"" + json.substr(at + from.size());
}

// The streaming mode: digests of every trace (or read from summaries), then the report
// (cli/fleet_answer: the cross-rank analyses, the findings of the ranks that matter). With --mpi each
// process digests its share and process 0 reports.
int runFleet(const AnalyzeArgs& a, const std::vector<std::string>& files, const AnalysisOptions& aopt,
             const Thresholds& th) {
  for (auto [set, flag] : {std::pair{!a.ceilings.empty(), "--ceilings"},
                           {!a.nccl_env.empty(), "--nccl-env"},
                           {!a.nccl_logs.empty(), "--nccl-log"},
                           {a.rank >= 0, "--rank"},
                           {a.checklist_only, "checklist"}})
    if (set)
      return fail(fmt::format("{} needs the per-rank analysis, not the streaming mode (summaries, --mpi, --stream or "
                              "more than {} traces): give it one rank's trace or up to {} traces",
                              flag, kInMemoryMax, kInMemoryMax),
                  kUsage);
  MpiWorld world;
  if (a.mpi) {
    auto w = mpiInit();
    if (!w.ok()) return fail(w.error().message);
    world = w.value();
  }
  std::vector<size_t> mine;
  for (size_t i = 0; i < files.size(); ++i)
    if (static_cast<int>(i % static_cast<size_t>(world.size)) == world.rank) mine.push_back(i);
  StreamOptions so;
  so.analysis = aopt;
  so.threads = a.threads;
  if (!a.quiet && world.rank == 0 && files.size() > 1) so.progress = streamProgress(::isatty(2));
  auto t0 = std::chrono::steady_clock::now();
  auto got = digestFiles(files, so, &mine);
  std::vector<RankDigest> digests;
  uint64_t bytes = 0;
  std::string error;
  int64_t rss = peakRssBytes();
  if (a.mpi) {
    // Each process sends its digests as summary lines (the file format: one serializer), or its error.
    auto all = mpiGather(got.ok() ? encodeDigestShare(got.value().digests, got.value().bytes)
                                  : encodeDigestShareError(got.error().message));
    rss = mpiMax(rss);
    if (auto shares = decodeDigestShares(all); shares.ok()) {
      digests = std::move(shares.value().digests);
      bytes = shares.value().bytes;
    } else {
      error = shares.error().message;
    }
  } else if (got.ok()) {
    digests = std::move(got.value().digests);
    bytes = got.value().bytes;
  } else {
    error = got.error().message;
  }
  int code = 0;
  if (world.rank == 0 && !error.empty()) {
    code = fail(error);
  } else if (world.rank == 0) {
    FleetPass pass{std::move(digests), {}, t0};
    pass.info.files = static_cast<int64_t>(files.size());
    pass.info.bytes = bytes;
    pass.info.peak_rss_bytes = rss;
    pass.info.processes = world.size;
    pass.info.threads = a.threads ? a.threads : std::max(1u, std::thread::hardware_concurrency());
    code = reportFleet(a, files, std::move(pass), aopt, th);
  }
  if (a.mpi) {
    code = mpiBroadcast(code);
    mpiFinalize();
  }
  return code;
}

// --measured-step-ms against the replay: a warning where it cannot be matched, a usage error where
// the trace cannot give that step at all. kOk, or the exit code after the error line.
int checkAnchor(const AnalyzeArgs& a, const StepWhatIf& w) {
  if (w.measured_step_ns > 0 && !w.available) {
    // The trace cannot be replayed: the rest of the analysis stands, without predictions.
    if (!a.quiet)
      std::fprintf(stderr, "gpudoctor: warning: --measured-step-ms %g: no replay to anchor (%s)\n", a.measured_step_ms,
                   w.basis.c_str());
  } else if (w.measured_step_ns > 0 && !w.anchored) {
    const double miss =
        std::abs(static_cast<double>(w.unprofiled_step_ns) / static_cast<double>(w.measured_step_ns) - 1);
    if (!w.anchor_possible && miss > kAnchorMaxMiss)
      return fail(fmt::format("--measured-step-ms {:g}: {}: is it the traced job's (same model, batch and machine)?",
                              a.measured_step_ms, w.anchor_note),
                  kUsage);
    if (!a.quiet)
      std::fprintf(stderr, "gpudoctor: warning: --measured-step-ms %g: %s; predicting from the nearest, %.2f ms\n",
                   a.measured_step_ms, w.anchor_note.c_str(), static_cast<double>(w.unprofiled_step_ns) / 1e6);
  }
  return kOk;
}

}  // namespace

int runAnalyze(const AnalyzeArgs& a) {
  if (std::string e = oneStdout({{"--json", a.json}, {"--html", a.html}, {"--summary-out", a.summary_out}}); !e.empty())
    return fail(e, kUsage);
  // --nccl-log takes every file after it: traces given after it land here.
  for (const auto& l : a.nccl_logs) {
    std::error_code ec;
    if (std::filesystem::is_directory(l, ec))
      return fail("--nccl-log " + l +
                      ": a directory, not an NCCL log (--nccl-log takes every file after it: give the "
                      "traces before it)",
                  kUsage);
  }
  Thresholds th = Thresholds::defaults();
  if (!a.thresholds.empty()) {
    auto text = readWholeFile(a.thresholds);
    Status s = text.ok() ? th.loadTomlText(text.value(), a.thresholds) : Status(text.error());
    if (!s.ok()) return fail(s.message());
  }
  std::optional<Ceilings> ceilings;
  EfficiencyOptions eff_opt;
  eff_opt.flops_per_step = a.flops_per_step;
  if (!a.mfu_precision.empty()) {
    eff_opt.precision = gemmPrecisionFromName(a.mfu_precision);
    if (!eff_opt.precision)
      return fail("--mfu-precision " + a.mfu_precision + ": use fp32, tf32, fp16, bf16 or fp8", kUsage);
  }
  if (!a.ceilings.empty()) {
    auto c = loadCeilingsFile(a.ceilings);
    if (!c.ok()) return fail(c.error().message);
    ceilings = c.value();
  } else if (a.flops_per_step > 0 || !a.mfu_precision.empty()) {
    return fail("--flops-per-step and --mfu-precision need --ceilings FILE (gpudoctor bench gpu --ceilings-out)",
                kUsage);
  }
  auto sel = StepSelection::parse(a.steps);
  if (!sel.ok()) return fail(sel.error().message, kUsage);
  std::vector<std::string> paths = a.paths;
  if (paths.empty()) {
    auto example = bundledExampleDir();
    if (!example.ok()) return fail(example.error().message);
    paths.push_back(example.value());
    if (!a.quiet)
      std::fprintf(stderr, "gpudoctor: no trace given; analyzing the bundled example %s\n", paths[0].c_str());
  }
  std::vector<std::string> skipped;
  auto files = expandTracePaths(paths, &skipped);
  if (!files.ok()) return fail(files.error().message);
  for (const auto& s : skipped) std::fprintf(stderr, "gpudoctor: note: %s\n", s.c_str());
  AnalysisOptions opt;
  opt.steps = sel.value();
  opt.top_n = a.top;
  opt.threads = a.threads;
  configureAnalysis(th, opt);
  bool any_summary = false;
  if (!a.mpi && !a.stream && files.value().size() <= kInMemoryMax)  // (with --mpi a process opens only its share)
    for (const auto& f : files.value())
      if ((any_summary = isSummaryFile(f))) break;
  if (a.mpi || a.stream || any_summary || files.value().size() > kInMemoryMax) {
    if (a.measured_step_ms > 0)
      return fail("--measured-step-ms: the streaming mode has no replay to anchor (analyze at most " +
                      std::to_string(kInMemoryMax) + " traces, without --stream, --mpi or summaries)",
                  kUsage);
    if (!a.quiet && !a.mpi && !a.stream && !any_summary)
      std::fprintf(stderr,
                   "gpudoctor: %zu traces: streaming mode (cross-rank analyses, one trace in memory per "
                   "thread; findings from the slowest, the median and the straggler rank, read in full)\n",
                   files.value().size());
    return runFleet(a, files.value(), opt, th);
  }
  bool show_progress = !a.quiet && ::isatty(2) && files.value().size() > 1;
  ReadSetOptions ro;
  ro.threads = a.threads;
  if (show_progress)
    ro.progress = [](size_t done, size_t total, const std::string&) {
      std::fprintf(stderr, "\rreading traces: %zu/%zu", done, total);
      if (done == total) std::fprintf(stderr, "\n");
    };
  auto t0 = std::chrono::steady_clock::now();
  auto traces = readTraceSet(files.value(), ro);
  if (!traces.ok()) {
    if (show_progress) std::fprintf(stderr, "\n");
    return fail(traces.error().message);
  }
  double read_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  uint64_t bytes = 0;
  for (const auto& t : traces.value()) bytes += t.stats.input_bytes;
  auto run = analyzeRun(traces.value(), opt);
  if (!run.ok()) return fail(run.error().message);
  if (a.rank >= 0 && std::none_of(run.value().ranks.begin(), run.value().ranks.end(),
                                  [&](const RankAnalysis& r) { return r.trace->rank == a.rank; })) {
    for (const auto& l : run.value().left_out)
      if (l.rank == a.rank) return fail(fmt::format("--rank {}: left out ({})", a.rank, l.reason), kUsage);
    return fail(fmt::format("--rank {}: no such rank in the traces", a.rank), kUsage);
  }
  DiagnosisInputs inputs;
  inputs.measured_step_ns = a.measured_step_ms * 1e6;
  NcclJudged nccl;
  if (std::string e = judgeNcclFiles(a.nccl_env, a.nccl_logs, traces.value(), nccl); !e.empty()) return fail(e);
  if (!a.nccl_env.empty()) inputs.nccl_env = &nccl.env;
  if (!a.nccl_logs.empty()) inputs.nccl_log = &nccl.log;
  Diagnosis diag = diagnoseRun(run.value(), th, inputs, ceilings ? &*ceilings : nullptr,
                               {.what_if = !a.no_what_if, .step_estimate = !a.json.empty()});
  if (int code = checkAnchor(a, diag.what_if); code != kOk) return code;
  std::optional<Efficiency> eff;
  if (ceilings) eff = computeEfficiency(run.value(), *ceilings, eff_opt);
  // The cross-rank analyses over the ranks' digests: the same figures the streaming mode gives.
  std::vector<RankDigest> digests = digestsOf(run.value());
  auto fleet = analyzeFleet(digests);
  if (!fleet.ok()) return fail(fleet.error().message);
  // "Across ranks" from three ranks, on the page as in the terminal ('-': the page alone on stdout).
  const FleetReport* across = fleet.value().ranks >= 3 ? &fleet.value() : nullptr;
  if (!a.html.empty())
    if (std::string e = writeDocument(a.html, renderHtml(run.value(), diag, {across})); !e.empty()) return fail(e);
  if (!a.summary_out.empty())
    if (std::string e = writeSummary(a.summary_out, digests); !e.empty()) return fail(e);
  if (!a.json.empty()) {
    std::string json = renderJson(run.value(), read_s, &diag, &th, eff ? &*eff : nullptr, &fleet.value());
    // The checklist's document is the analyze document under its own name.
    if (a.checklist_only) json = relabelTool(json, "gpudoctor checklist");
    if (std::string e = writeDocument(a.json, json); !e.empty()) return fail(e);
  }
  const int code = a.checklist_only && a.strict && anyFailed(diag) ? kGateFailed : kOk;
  if (a.json == "-" || a.html == "-" || a.summary_out == "-") return code;  // a document alone on stdout
  const bool color = colorForStdout(a.color);
  std::string text;
  if (a.checklist_only) {
    text = renderChecklist(diag, color);
  } else {
    TerminalOptions to{.detail_rank = a.rank, .read_seconds = read_s, .read_bytes = bytes, .color = color};
    // The answer first: findings right after the header lines.
    TerminalParts parts = renderTerminalParts(run.value(), to);
    text = parts.header + (a.findings > 0 ? "\n" + renderFindings(diag, a.findings, color) : "") +
           (across ? renderFleetText(*across, 8, color) : "") + parts.body;
    if (eff) text += renderEfficiencyText(*eff, color);
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  return code;
}

}  // namespace gpudoctor::cli
