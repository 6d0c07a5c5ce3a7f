// The streaming mode's report (process 0 under --mpi): the cross-rank analyses over every rank's
// digest, then the ranks that matter (analysis/fleet_focus: the slowest, the median, the straggler)
// read in full and diagnosed as one small run, the pipeline analyze runs on up to 64 traces, so that
// a job of any size gets findings and a plan. At most kFocusRanksMax traces are in memory, after
// the digests are freed. Writes the terminal text, --json, --html and --summary-out.
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/fleet_focus.h"
#include "analysis/run_analysis.h"
#include "cli/analyze_args.h"
#include "common/result.h"
#include "diagnosis/diagnosis.h"
#include "model/rank_digest.h"
#include "pipeline/fleet_stream.h"
#include "report/fleet_report.h"

namespace gpudoctor::cli {

// The ranks picked, their traces (which `run` points into) and their diagnosis; no run when no
// rank could be read in full (their digests came from summaries).
struct FleetAnswer {
  std::vector<FocusRank> focus;
  std::vector<RankTrace> traces;
  std::optional<RunAnalysis> run;
  std::optional<Diagnosis> diagnosis;
};

struct FleetAnswerOptions {
  AnalysisOptions analysis;
  const Thresholds* thresholds = nullptr;
  DiagnoseRunOptions diagnose;
  bool quiet = false;  // no note on stderr naming the ranks read
};

// Reads the traces of `focus` that were given as traces (`files`; a rank known only from a summary
// stays unanalyzed), analyzes them as one run and diagnoses it. Unless they are every rank of the
// job, the run's straggler is the cross-rank analyses' (a few ranks cannot tell who holds a group
// back). Errors as analyze does for a trace that cannot be read.
Result<std::unique_ptr<FleetAnswer>> answerFleet(const FleetReport& fleet, std::vector<FocusRank> focus,
                                                 const std::vector<std::string>& files, const FleetAnswerOptions& opt);

// What the streaming pass gathered, for the report.
struct FleetPass {
  std::vector<RankDigest> digests;  // every rank's (MPI: every process's)
  FleetRunInfo info;                // files, bytes, peak memory, processes, threads (seconds: set here)
  std::chrono::steady_clock::time_point start;
};

// Progress on stderr for the streaming pass: a line rewritten in place on a terminal, else one
// line every ten seconds.
std::function<void(const StreamProgress&)> streamProgress(bool tty);

// The report of the streaming mode: the exit code (cli/exit_codes.h), its error line printed.
int reportFleet(const AnalyzeArgs& a, const std::vector<std::string>& files, FleetPass pass,
                const AnalysisOptions& aopt, const Thresholds& th);

}  // namespace gpudoctor::cli
