// The registry of trace formats, one line each, in probe order (the first reader whose probe claims
// a file reads it). A format is a folder under sources/ that defines `const TraceReader&
// <id>TraceReader()`; adding one is that folder, its line here and its sources in CMakeLists.txt.
#include "sources/trace_reader.h"

#define GPUDOCTOR_TRACE_READERS(X)                                                                \
  X(kineto) /* sources/kineto/: PyTorch profiler (Kineto) and Chrome-trace JSON, plain or gzip */ \
  X(record) /* sources/record/: gpudoctor record's CUPTI recordings (.gdrec), plain or gzip */

namespace gpudoctor {

#define GPUDOCTOR_DECLARE_READER(id) const TraceReader& id##TraceReader();
GPUDOCTOR_TRACE_READERS(GPUDOCTOR_DECLARE_READER)
#undef GPUDOCTOR_DECLARE_READER

std::span<const TraceReader* const> traceReaders() {
#define GPUDOCTOR_LIST_READER(id) &id##TraceReader(),
  static const TraceReader* const kAll[] = {GPUDOCTOR_TRACE_READERS(GPUDOCTOR_LIST_READER)};
#undef GPUDOCTOR_LIST_READER
  return kAll;
}

}  // namespace gpudoctor
