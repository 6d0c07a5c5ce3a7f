#include "sources/kineto/kineto_trace_reader.h"

#include "sources/kineto/kineto_reader.h"

namespace gpudoctor {

namespace {
bool isWs(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

class KinetoTraceReader final : public TraceReader {
 public:
  std::string_view name() const override { return "kineto"; }
  std::string_view description() const override {
    return "PyTorch profiler (Kineto) or Chrome-trace JSON, .json or .json.gz";
  }
  bool probe(std::string_view head, std::string_view) const override { return looksLikeKinetoTrace(head); }
  Result<RankTrace> read(const std::string& path) const override { return readKinetoTrace(path); }
};
}  // namespace

bool looksLikeKinetoTrace(std::string_view head) {
  if (head.substr(0, 3) == "\xEF\xBB\xBF") head.remove_prefix(3);
  size_t i = 0;
  while (i < head.size() && isWs(head[i])) ++i;
  if (i == head.size()) return false;
  if (head[i] == '[') {
    // Chrome's JSON Array Format: a bare array of event objects.
    ++i;
    while (i < head.size() && isWs(head[i])) ++i;
    return i == head.size() || head[i] == '{' || head[i] == ']';
  }
  if (head[i] != '{') return false;
  // Kineto writes schemaVersion and deviceProperties first; other producers start with traceEvents
  // or displayTimeUnit.
  static constexpr std::string_view kKeys[] = {"\"traceEvents\"",     "\"schemaVersion\"",       "\"deviceProperties\"",
                                               "\"distributedInfo\"", "\"baseTimeNanoseconds\"", "\"displayTimeUnit\""};
  for (auto k : kKeys)
    if (head.find(k, i) != std::string_view::npos) return true;
  return false;
}

const TraceReader& kinetoTraceReader() {
  static const KinetoTraceReader r;
  return r;
}

}  // namespace gpudoctor
