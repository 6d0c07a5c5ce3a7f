// Rendering of the cross-rank analyses (analysis/fleet): terminal text and JSON, for analyze's
// report of any multi-rank run and for the streaming (many-rank, summary, MPI) mode's own document.
// Computes nothing.
#pragma once
#include <cstdint>
#include <string>

#include "analysis/fleet.h"

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

// The cross-rank section: slow ranks, step outliers, slow steps, pipeline stages, process groups,
// the slowest ranks; `rows`: how many ranks the per-rank table lists at most. `color`: the headings
// in ANSI bold (report/style.h), the layout unchanged.
std::string renderFleetText(const FleetReport& f, size_t rows = 8, bool color = false);

// The streaming mode's terminal report: a header line, the section above, kernel classes, notes.
std::string renderFleetReport(const FleetReport& f, const FleetRunInfo& info, bool color = false);

// The streaming mode's JSON document; its "fleet" object is the one renderJson adds to a full
// report of the same ranks (identical figures), its "timing" object the only run-dependent part.
std::string renderFleetJson(const FleetReport& f, const FleetRunInfo& info);

}  // namespace gpudoctor
