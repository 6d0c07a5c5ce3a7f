// The seam between trace formats and the model: each format is one TraceReader (a folder under
// sources/) that says from a file's first bytes whether it reads it, and reads it into a RankTrace
// with roles set. trace_readers.cc lists them; trace_set picks one per file.
#pragma once
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "common/result.h"
#include "model/trace.h"

namespace gpudoctor {

// How many bytes of a file (decompressed) a probe sees.
constexpr size_t kProbeBytes = 64u << 10;

class TraceReader {
 public:
  virtual ~TraceReader() = default;
  // Short stable name of the format ("kineto").
  virtual std::string_view name() const = 0;
  // What the reader reads, for the message listing the known formats.
  virtual std::string_view description() const = 0;
  // True when this reader reads the file: head is its first kProbeBytes (fewer for a short file),
  // decompressed; path is its name. Cheap, and never true for another reader's format.
  virtual bool probe(std::string_view head, std::string_view path) const = 0;
  // Reads the file into one rank's trace, roles set. Errors name the file.
  virtual Result<RankTrace> read(const std::string& path) const = 0;
};

// Every reader, in probe order (the registry, trace_readers.cc).
std::span<const TraceReader* const> traceReaders();

}  // namespace gpudoctor
