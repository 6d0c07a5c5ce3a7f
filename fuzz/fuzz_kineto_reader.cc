// libFuzzer target: arbitrary bytes (plain or gzip) through the Kineto reader and, when they
// parse, through the whole analysis. Any crash, hang, leak or UB report is a bug.
#include <cstddef>
#include <cstdint>

#include "analysis/run_analysis.h"
#include "sources/kineto/kineto_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpudoctor;
  auto in = ByteStream::fromMemory(reinterpret_cast<const char*>(data), size, "fuzz.json");
  KinetoReadOptions opt;
  opt.chunk_bytes = 4096;  // small chunks: exercise refills and events straddling them
  auto r = readKinetoTrace(*in, "fuzz.json", opt);
  if (!r.ok()) return 0;
  std::vector<RankTrace> traces;
  traces.push_back(std::move(r.value()));
  AnalysisOptions aopt;
  aopt.threads = 1;
  auto run = analyzeRun(traces, aopt);
  (void)run;
  return 0;
}
