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
#include "cli/fleet_stream.h"
#include "cli/json_output.h"
#include "cli/mpi_world.h"
#include "cli/usage.h"
#include "common/atomic_file.h"
#include "diagnosis/diagnosis.h"
#include "diagnosis/nccl_log_check.h"
#include "diagnosis/what_if.h"
#include "probes/nccl_library.h"
#include "report/bench_gpu_report.h"
#include "report/findings_text.h"
#include "report/fleet_report.h"
#include "report/html_report.h"
#include "report/json_report.h"
#include "report/terminal.h"
#include "sources/ceilings_file/ceilings_file.h"
#include "sources/nccl_env/settings_reader.h"
#include "sources/nccl_log/nccl_log_reader.h"
#include "sources/summary/summary_file.h"
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

// Progress on stderr for the streaming mode: a line rewritten in place on a terminal, else one
// line every ten seconds.
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
    std::string payload;
    if (got.ok()) {
      payload = "OK " + std::to_string(got.value().bytes) + "\n";
      for (const auto& d : got.value().digests) payload += summaryLine(d) + "\n";
    } else {
      payload = "ERR\n" + got.error().message;
    }
    auto all = mpiGather(payload);
    rss = mpiMax(rss);
    for (size_t p = 0; p < all.size() && error.empty(); ++p) {
      std::string_view text = all[p];
      size_t nl = text.find('\n');
      std::string_view head = text.substr(0, nl);
      if (head == "ERR") {
        error = fmt::format("MPI process {}: {}", p, text.substr(nl + 1));
        break;
      }
      bytes += std::strtoull(std::string(head.substr(3)).c_str(), nullptr, 10);
      size_t line = 0;
      for (size_t at = nl + 1; at < text.size();) {
        size_t e = text.find('\n', at);
        if (e == std::string_view::npos) e = text.size();
        auto d = parseSummaryLine(text.substr(at, e - at), fmt::format("MPI process {}: summary {}", p, ++line));
        if (!d.ok()) {
          error = d.error().message;
          break;
        }
        digests.push_back(std::move(d.value()));
        at = e + 1;
      }
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

// The job's NCCL settings (--nccl-env) and logs (--nccl-log) judged, as `nccl env` and `nccl log` do.
struct NcclJudged {
  std::vector<EnvFinding> env;
  std::vector<Finding> log;
};

// Judges the files given; "" or the error.
std::string judgeNccl(const AnalyzeArgs& a, const std::vector<RankTrace>& traces, NcclJudged& out) {
  if (!a.nccl_env.empty()) {
    auto settings = readNcclSettingsFile(a.nccl_env);
    if (!settings.ok()) return settings.error().message;
    // Judged against the installed NCCL when there is one; the host checks are left to `nccl env`
    // on the job's own machine (this may not be it).
    // The job's NCCL is the one its traces recorded (distributedInfo); else the one installed here.
    EnvCheckOptions eo;
    for (const auto& t : traces)
      if (auto v = parseNcclVersion(t.nccl_version); v.ok()) eo.version = v.value();
    if (!eo.version) {
      InstalledNccl lib = probeInstalledNccl();
      if (lib.found) eo.version = lib.version;
    }
    out.env = checkNcclEnv(settings.value(), NcclVarTable::builtin(), eo);
  }
  if (!a.nccl_logs.empty()) {
    auto facts = readNcclLogs(a.nccl_logs);
    if (!facts.ok()) return facts.error().message;
    out.log = judgeNcclLog(facts.value());
  }
  return "";
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
  if (std::string e = judgeNccl(a, traces.value(), nccl); !e.empty()) return fail(e);
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

}  // namespace

namespace {
void addCommonOptions(CLI::App* cmd, AnalyzeArgs* args) {
  cmd->add_option("paths", args->paths,
                  "Trace files (.json or .json.gz) or directories of per-rank traces; rank from the trace's "
                  "distributedInfo, else file order. None: the bundled 2-rank example.");
  cmd->add_option("--steps", args->steps, "Steps to measure: all (default), N, N-M, or a list like 2,4-6")
      ->capture_default_str();
  addJsonOption(cmd, &args->json, "every figure and the definitions")->type_name("FILE");
  cmd->add_option("--top", args->top, "Number of kernels in the top-kernels table")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--rank", args->rank, "Rank whose steps are listed in detail (default: the first)")
      ->check(wholeNumber());
  cmd->add_option("--threads", args->threads, "Parser threads (default: one per core, at most one per file)")
      ->check(wholeNumber());
  addQuiet(cmd, &args->quiet);
  addColorOption(cmd, &args->color);
  cmd->add_flag("--no-what-if", args->no_what_if,
                "Skip the replay that predicts each fix's speedup and the plan (findings keep their upper bounds; "
                "--json still keeps the un-profiled step alone, for compare)");
  cmd->add_option("--thresholds", args->thresholds,
                  "TOML file overriding judgement thresholds (keys: gpu_util_min, comm_share_max, io_wait_max, ...; "
                  "see docs/reference/analyze.md)")
      ->type_name("FILE");
  cmd->add_option("--nccl-env", args->nccl_env,
                  "The job's NCCL settings (export lines, env list or NCCL INFO log) to judge alongside the trace")
      ->type_name("FILE");
  cmd->add_option("--nccl-log", args->nccl_logs,
                  "The job's NCCL_DEBUG=INFO logs: transports, GDR, channels and NCCL warnings become findings")
      ->type_name("FILE...");
  cmd->add_option("--html", args->html,
                  "Also write a self-contained HTML report with charts to FILE ('-': the page alone, "
                  "on stdout)")
      ->type_name("FILE|-");
  cmd->add_option("--summary-out", args->summary_out,
                  "Also write every rank's summary (kilobytes per rank and step) to FILE (.gdsum, or .gdsum.gz "
                  "compressed; '-': alone on stdout): analyze reads it back like a trace, for the cross-rank analyses")
      ->type_name("FILE|-");
  cmd->add_flag("--stream", args->stream,
                fmt::format("Streaming mode whatever the rank count (automatic beyond {} traces or with summaries): "
                            "one trace in memory per thread, the cross-rank analyses, and the findings and plan of the "
                            "slowest, the median and the straggler rank, read in full afterwards",
                            kInMemoryMax));
  cmd->add_flag("--mpi", args->mpi,
                "Run under mpirun or srun: each process analyzes its share of the files, process 0 gathers the "
                "summaries and reports (e.g. mpirun -np 8 gpudoctor analyze --mpi DIR --json out.json)");
  cmd->add_flag("--allow-missing-ranks", args->allow_missing,
                "Streaming mode: analyze even when ranks of the job's world size have no trace (they are named in "
                "the notes)");
}
}  // namespace

std::function<int()> addAnalyze(CLI::App& app) {
  auto args = std::make_shared<AnalyzeArgs>();
  auto* cmd = app.add_subcommand(
      "analyze",
      "Time breakdown of PyTorch profiler (Kineto) traces and what to fix first: findings ranked by the step "
      "time they can save, with evidence and the code or env change; per rank and step GPU busy / compute / "
      "NCCL (overlapped, exposed) / copies / idle and why; host data loading, syncs and launch latency; kernel "
      "classes; NCCL bandwidth; stragglers. Exact interval arithmetic on integer nanoseconds.");
  addCommonOptions(cmd, args.get());
  cmd->add_option("--findings", args->findings, "Findings shown in the terminal (0: none)")
      ->capture_default_str()
      ->check(wholeNumber());
  cmd->add_option("--measured-step-ms", args->measured_step_ms,
                  "The step time the job logs when it runs without the profiler (same model, batch and machine), "
                  "in ms: the replay's un-profiled step is matched to it (the profiler's estimated cost scaled) "
                  "and every predicted speedup starts from it. Without it the profiler's cost is estimated from "
                  "the trace (e.g. --measured-step-ms 18.4)")
      ->type_name("MS")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            char* end = nullptr;
            const double v = std::strtod(s.c_str(), &end);
            return end != s.c_str() && *end == '\0' && v >= 1e-3 && v <= 3.6e6
                       ? ""
                       : s + " is not a step time in ms (0.001 to 3600000)";
          },
          "MS", "step time"))
      ->excludes("--no-what-if");
  cmd->add_option(
         "--ceilings", args->ceilings,
         "Ceilings JSON (gpudoctor bench gpu --ceilings-out, or --datasheet H200): adds MFU and % of bandwidth")
      ->type_name("FILE");
  cmd->add_option("--flops-per-step", args->flops_per_step,
                  "Training FLOPs per step per rank, for MFU (≈ 6 × parameters × tokens per step per rank)")
      ->check(positive());
  cmd->add_option("--mfu-precision", args->mfu_precision,
                  "Peak to measure MFU against: fp32, tf32, fp16, bf16, fp8 "
                  "(default: the precision of most GEMM time)");
  return [args] { return runAnalyze(*args); };
}

std::function<int()> addChecklist(CLI::App& app) {
  auto args = std::make_shared<AnalyzeArgs>();
  args->checklist_only = true;
  auto* cmd = app.add_subcommand(
      "checklist",
      "The optimization checklist (compute, communication, IO, memory, monitoring): each item pass / fail / "
      "not measurable from the traces, with its evidence. Same inputs and options as analyze.");
  addCommonOptions(cmd, args.get());
  cmd->add_flag("--strict", args->strict, "Exit 1 when any item fails (a CI gate); not-measurable items do not fail");
  return [args] { return runAnalyze(*args); };
}

}  // namespace gpudoctor::cli
