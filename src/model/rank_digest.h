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

#include "model/intern.h"
#include "model/run_summary.h"

namespace gpudoctor {

// The summary file's format version: readers refuse any other.
inline constexpr int kSummaryFormatVersion = 1;

// A process group this rank is in. Its size and the rank's place in it, not its member list: a
// rank of a 4,096-rank group carries 8 bytes, not 16 KB, and a pipeline stage is a place.
struct DigestGroup {
  std::string name;       // the process group's key (its name, else its rank list), as collectives carry it
  std::string_view desc;  // its description ("default_pg", "DATA_PARALLEL_GROUP", ...), interned; "" unknown
  int size = 0;           // members, from distributedInfo.pg_config or the collectives' rank list; 0 unknown
  int position = -1;      // this rank's index in the group's rank list; -1 unknown
};

// A kernel class's calls and summed time over the selected steps.
struct DigestClass {
  std::string_view name;  // interned (or a literal)
  int64_t count = 0, total_ns = 0;
};

// One NCCL kernel launched inside a selected step.
struct DigestCollective {
  uint32_t group = 0;  // index into RankDigest::groups
  uint32_t seq = 0;    // the k-th collective of that group on this rank (the reader's count)
  uint32_t step = 0;   // index into RankDigest::steps
  int64_t dur_ns = 0;  // the kernel's duration (waiting for the last arrival included)
};
static_assert(sizeof(DigestCollective) == 24, "the bulk of a digest: keep it small");

struct RankDigest {
  int rank = -1;
  int world_size = -1;  // from the trace's distributedInfo; -1 unknown
  std::string path;
  std::string_view device;    // the first GPU's name, interned; "" unknown
  uint64_t input_bytes = 0;   // bytes of the trace file it came from
  std::string_view left_out;  // why the rank has no figures (no GPU activity), interned; "" when analyzed
  std::vector<StepFigures> steps;
  std::vector<DigestGroup> groups;            // pg_config's groups holding this rank, then groups only collectives name
  std::vector<DigestCollective> collectives;  // in (group, seq) order
  std::vector<DigestClass> classes;           // kernel classes over the selected steps
  // The job profile's fields as "key\tvalue\n" lines, interned: most ranks share one text.
  std::string_view job;
};

// The job profile's fields of a digest, and back.
inline std::vector<std::pair<std::string, std::string>> jobPairs(const RankDigest& d) {
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t p = 0; p < d.job.size();) {
    size_t tab = d.job.find('\t', p), nl = d.job.find('\n', p);
    if (tab == std::string_view::npos || nl == std::string_view::npos || tab > nl) break;
    out.emplace_back(d.job.substr(p, tab - p), d.job.substr(tab + 1, nl - tab - 1));
    p = nl + 1;
  }
  return out;
}
inline void setJob(RankDigest& d, const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string text;
  auto add = [&text](const std::string& s) {
    for (char c : s) text += c == '\t' || c == '\n' ? ' ' : c;
  };
  for (const auto& [k, v] : fields) {
    add(k);
    text += '\t';
    add(v);
    text += '\n';
  }
  d.job = internText(text);
}

}  // namespace gpudoctor
