// The streaming mode of analyze: each trace is read, analyzed and reduced to its digest
// (analysis/digest) by a pool of threads, then freed, so memory holds one trace per thread plus
// the digests, whatever the number of ranks. Summary files are read as they are.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "analysis/run_analysis.h"
#include "common/result.h"
#include "model/rank_digest.h"

namespace gpudoctor {

struct StreamProgress {
  size_t done = 0, total = 0;
  uint64_t bytes = 0;  // on disk, of the files done
};

struct StreamOptions {
  AnalysisOptions analysis;  // steps and thresholds (its threads field is ignored: one thread per file)
  unsigned threads = 0;      // 0: one per core
  // Called after each file (serialized), from the worker threads.
  std::function<void(const StreamProgress&)> progress;
};

struct StreamResult {
  std::vector<RankDigest> digests;
  uint64_t bytes = 0;  // on disk
};

// True when the file's first bytes are a rank summary (sources/summary).
bool isSummaryFile(const std::string& path);

// Digests of every file (a trace: one rank, its rank from distributedInfo, else `first_rank` plus
// its index in files; a summary: its ranks). The first failure in file order is returned, naming
// the file; the remaining files are not read.
Result<StreamResult> digestFiles(const std::vector<std::string>& files, const StreamOptions& opt,
                                 const std::vector<size_t>* file_indices = nullptr);

// The digests of an analyzed run (the in-memory mode), its left-out ranks included.
std::vector<RankDigest> digestsOf(const RunAnalysis& run);

// This process's peak resident memory (bytes).
int64_t peakRssBytes();

}  // namespace gpudoctor
