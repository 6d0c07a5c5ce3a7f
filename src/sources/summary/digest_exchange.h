// The text analyze --mpi's processes exchange: each sends its digests as summary lines (the .gdsum
// serializer, summary_file.h) after "OK <bytes>", or "ERR" and its error; process 0 reads every
// process's text back into one list of digests.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "model/rank_digest.h"

namespace gpudoctor {

// One process's text: its digests and the bytes it read.
std::string encodeDigestShare(const std::vector<RankDigest>& digests, uint64_t bytes);
// One process's text when it failed.
std::string encodeDigestShareError(const std::string& message);

struct DigestShares {
  std::vector<RankDigest> digests;  // every process's, in process order
  uint64_t bytes = 0;               // read by all
};

// Every process's text (in process order) read back, or the first error, naming its process.
Result<DigestShares> decodeDigestShares(const std::vector<std::string>& texts);

}  // namespace gpudoctor
