// Rendering of the cross-rank analyses (analysis/fleet): terminal text and JSON, for analyze's
// report of any multi-rank run and for the streaming (many-rank, summary, MPI) mode's own document.
// Computes nothing.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/fleet.h"
#include "analysis/fleet_focus.h"
#include "diagnosis/diagnosis.h"

namespace gpudoctor {

// What the streaming mode read and how fast (timing fields, left out of equality checks).
struct FleetRunInfo {
  int64_t files = 0;           // traces and summaries read
  int64_t ranks = 0;           // ranks they hold
  uint64_t bytes = 0;          // their bytes on disk
  double seconds = 0;          // reading and analyzing
  int64_t peak_rss_bytes = 0;  // this process's peak resident memory (MPI: the largest process's)
  int processes = 1;           // MPI processes that read the files
  unsigned threads = 1;        // reading threads per process
};

// The ranks the streaming mode read in full (analysis/fleet_focus) and their diagnosis, for its
// reports: the findings and the plan, headed by which ranks were analyzed and why.
struct FleetFindings {
  const std::vector<FocusRank>* focus = nullptr;  // null: none picked (no section)
  const Diagnosis* diagnosis = nullptr;           // of the ranks analyzed in full; null when none was
  const Thresholds* thresholds = nullptr;         // in force (the JSON lists them)
  size_t max_findings = 8;                        // terminal: findings shown (0: none)
};

// The cross-rank section's verdicts, one sentence each: slow ranks, rank-step outliers (at most
// `max_outliers`, then how many more), slow steps, the pipeline; "no slow rank..." when none.
std::vector<std::string> fleetVerdicts(const FleetReport& f, size_t max_outliers = 10);

// The cross-rank section: slow ranks, step outliers, slow steps, pipeline stages, process groups,
// the slowest ranks; `rows`: how many ranks the per-rank table lists at most. `color`: the headings
// in ANSI bold (report/style.h), the layout unchanged.
std::string renderFleetText(const FleetReport& f, size_t rows = 8, bool color = false);

// That findings need the traces, and which ranks' to pass, when no rank of `focus` was analyzed in
// full (summaries only); "" otherwise.
std::string needsTracesNote(const std::vector<FocusRank>& focus);

// The ranks analyzed in full and why, then their findings and plan (report/findings_text); or, when
// none could be read (summaries only), that findings need the traces and which ranks' to pass.
std::string renderFocusText(const FleetFindings& a, bool color = false);

// The streaming mode's terminal report: a header line, the ranks analyzed in full with their
// findings and plan (when `answer` has them), the section above, kernel classes, notes.
std::string renderFleetReport(const FleetReport& f, const FleetRunInfo& info, bool color = false,
                              const FleetFindings& answer = {});

// The streaming mode's JSON document; its "fleet" object is the one renderJson adds to a full
// report of the same ranks (identical figures), its "timing" object the only run-dependent part;
// with `answer`, "analyzed_in_full" (the ranks and why) and "diagnosis" (renderJson's, or null).
std::string renderFleetJson(const FleetReport& f, const FleetRunInfo& info, const FleetFindings& answer = {});

}  // namespace gpudoctor
