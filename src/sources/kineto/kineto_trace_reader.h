// The Kineto reader behind the TraceReader seam: PyTorch profiler traces and other Chrome-trace
// JSON (an object with traceEvents, or a bare array of events), plain or gzip.
#pragma once
#include <string_view>

#include "sources/trace_reader.h"

namespace gpudoctor {

// True when head (a file's first bytes, decompressed) starts a Chrome-trace JSON document: an
// array of events, or an object whose first bytes hold a Kineto / Chrome-trace top-level key.
bool looksLikeKinetoTrace(std::string_view head);

// The reader (registered in trace_readers.cc).
const TraceReader& kinetoTraceReader();

}  // namespace gpudoctor
