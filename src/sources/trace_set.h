// Opens what the user names on the command line (trace files, or directories of per-rank traces)
// and reads them in parallel, one thread per file, into RankTraces ordered by rank.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "common/result.h"
#include "model/trace.h"

namespace gpudoctor {

// Expands directories into the trace files inside them (*.json, *.json.gz, *.pt.trace.json[.gz]),
// sorted by name. Errors for a path that does not exist, or a directory with no trace files.
Result<std::vector<std::string>> expandTracePaths(const std::vector<std::string>& paths);

struct ReadSetOptions {
  unsigned threads = 0;  // 0: one per file, at most the hardware's thread count
  // Called after each file is read (from worker threads, serialized): done, total, path.
  std::function<void(size_t, size_t, const std::string&)> progress;
};

// Reads every file; ranks come from distributedInfo, else from file order. The first failure
// (in file order) is returned. Duplicate ranks are an error: two traces of one rank would be
// counted twice.
Result<std::vector<RankTrace>> readTraceSet(const std::vector<std::string>& files,
                                            const ReadSetOptions& opt = {});

}  // namespace gpudoctor
