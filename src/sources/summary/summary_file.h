// Rank summaries (model/rank_digest.h) on disk: `analyze --summary-out FILE` writes them and
// `analyze FILE` reads them back like traces, so a 1,000-rank run can be summarized where its
// traces are (one file per node, say) and analyzed anywhere in kilobytes per rank and step.
//
// Format (JSON Lines, gzip-compressed when the name ends in .gz):
//   {"format": "gpudoctor-summary", "version": 1, "ranks": N}
//   one object per rank: rank, world_size, path, device, input_bytes, left_out,
//     steps [[number, wall, compute, comm_exposed, copies, idle_host, idle_sync, idle_dependency,
//             idle_other, idle_host_loader, idle_sync_loader] ...] (ns),
//     groups [{name, desc, size, position}], collectives [[group, seq, step, dur_ns] ...],
//     classes [[name, count, total_ns] ...], job [[field, value] ...]
//   {"end": N}
// The closing line makes a cut file an error even when it is not compressed.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "model/rank_digest.h"

namespace gpudoctor {

inline constexpr std::string_view kSummaryFormat = "gpudoctor-summary";

// True when a file's first bytes (decompressed) are a summary's first line.
bool isSummaryHead(std::string_view head);

// One rank as one line (no newline), and back. `where` names the line in errors.
std::string summaryLine(const RankDigest& d);
Result<RankDigest> parseSummaryLine(std::string_view line, const std::string& where);

// The whole document: header, ranks, end line.
std::string summaryDocument(const std::vector<RankDigest>& digests);

// Writes atomically (gzip when path ends in .gz); reads either form. Errors name the file, and
// the line for a malformed rank, another format version, a cut file or a count mismatch.
Status writeSummaryFile(const std::string& path, const std::vector<RankDigest>& digests);
Result<std::vector<RankDigest>> readSummaryFile(const std::string& path);
// The same for a decompressed document in memory (`path` names it in errors).
Result<std::vector<RankDigest>> parseSummaryText(std::string_view text, const std::string& path);

}  // namespace gpudoctor
