// What the cross-rank analyses need of one rank, kept after its trace is freed: the per-step
// figures, the rank's collectives keyed by (process group, sequence number), its process groups,
// kernel class totals and the job profile's fields. Kilobytes per rank and step, so an N-rank run
// is analyzed one rank at a time (analysis/digest builds it, analysis/fleet joins the ranks,
// sources/summary saves and reads it, the MPI mode gathers it).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/run_summary.h"

namespace gpudoctor {

// The summary file's format version: readers refuse any other.
inline constexpr int kSummaryFormatVersion = 1;

struct DigestGroup {
  std::string name;        // the process group's key (its name, else its rank list), as collectives carry it
  std::string desc;        // its description ("default_pg", "DATA_PARALLEL_GROUP", ...); "" unknown
  std::vector<int> ranks;  // its members from distributedInfo.pg_config; empty: unknown
};

// One NCCL kernel launched inside a selected step.
struct DigestCollective {
  uint32_t group = 0;    // index into RankDigest::groups
  int64_t seq = 0;       // the k-th collective of that group on this rank (the reader's count)
  uint32_t step = 0;     // index into RankDigest::steps
  int64_t dur_ns = 0;    // the kernel's duration (waiting for the last arrival included)
};

struct RankDigest {
  int rank = -1;
  int world_size = -1;          // from the trace's distributedInfo; -1 unknown
  std::string path;
  std::string device;           // the first GPU's name; "" unknown
  uint64_t input_bytes = 0;     // bytes of the trace file it came from
  std::string left_out;         // why the rank has no figures (no GPU activity); "" when analyzed
  std::vector<StepFigures> steps;
  std::vector<DigestGroup> groups;  // pg_config's groups holding this rank, then groups only collectives name
  std::vector<DigestCollective> collectives;  // in (group, seq) order
  std::vector<TimeTotal> classes;             // kernel classes over the selected steps
  std::vector<std::pair<std::string, std::string>> job;  // the job profile's fields, as text
};

}  // namespace gpudoctor
