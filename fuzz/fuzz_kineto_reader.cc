// libFuzzer target: arbitrary bytes (plain or gzip) through the Kineto probe and reader and, when
// they parse, through everything after reading (fuzz_pipeline.h). Any crash, hang, leak or UB report is a bug.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_pipeline.h"
#include "sources/kineto/kineto_reader.h"
#include "sources/kineto/kineto_trace_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpudoctor;
  (void)looksLikeKinetoTrace(std::string_view(reinterpret_cast<const char*>(data), std::min(size, kProbeBytes)));
  auto in = ByteStream::fromMemory(reinterpret_cast<const char*>(data), size, "fuzz.json");
  KinetoReadOptions opt;
  opt.chunk_bytes = 4096;  // small chunks: exercise refills and events straddling them
  auto r = readKinetoTrace(*in, "fuzz.json", opt);
  if (!r.ok()) return 0;
  fuzzPipeline(std::move(r.value()));
  return 0;
}
