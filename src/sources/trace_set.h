// Opens what the user names on the command line (trace files, or directories of per-rank traces)
// and reads them in parallel, one thread per file, into RankTraces ordered by rank. Each file is
// read by the TraceReader whose probe claims it (sources/trace_readers.cc).
#pragma once
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "model/trace.h"
#include "sources/trace_reader.h"

namespace gpudoctor {

// Expands directories into the trace files inside them (*.json, *.json.gz, *.pt.trace.json[.gz]),
// sorted by name. Errors for a path that does not exist, or a directory with no trace files. With
// `skipped`, a file inside a directory that no trace reader claims (a config, a results file) is left
// out and named there ("<path>: skipped, not a trace"); a file named directly is always kept. A
// stream (`-` for stdin, /dev/stdin, a pipe, <(...)) is read once into a temporary file that the
// process removes at exit, whose path is returned in its place: a trace is read more than once
// (its head to pick the reader, then the whole).
Result<std::vector<std::string>> expandTracePaths(const std::vector<std::string>& paths,
                                                  std::vector<std::string>* skipped = nullptr);

// The first n bytes of a file, decompressed when it is gzip (fewer for a short file). Errors when
// the file cannot be opened or its first bytes cannot be read.
Result<std::string> readTraceHead(const std::string& path, size_t n = kProbeBytes);

// The first of `readers` whose probe claims the file (head: its first bytes, decompressed); else
// one Error naming the file and the formats known.
Result<const TraceReader*> pickTraceReader(const std::string& path, std::string_view head,
                                           std::span<const TraceReader* const> readers = traceReaders());

// Reads one trace file with the reader that claims it.
Result<RankTrace> readTrace(const std::string& path);

struct ReadSetOptions {
  unsigned threads = 0;  // 0: one per file, at most the hardware's thread count
  // Called after each file is read (from worker threads, serialized): done, total, path.
  std::function<void(size_t, size_t, const std::string&)> progress;
};

// Reads every file; ranks come from distributedInfo, else from file order. The first failure
// (in file order) is returned. Duplicate ranks are an error: two traces of one rank would be
// counted twice.
Result<std::vector<RankTrace>> readTraceSet(const std::vector<std::string>& files, const ReadSetOptions& opt = {});

}  // namespace gpudoctor
