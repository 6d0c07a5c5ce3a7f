// libFuzzer target: arbitrary bytes (plain or gzip) through the recording probe and reader
// (sources/record) and, when they parse, through everything after reading (fuzz_pipeline.h).
// Seeds: fuzz/seeds_record/ (recordings made on an H200). Any crash, hang, leak or UB report is a bug.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_pipeline.h"
#include "sources/record/record_reader.h"
#include "sources/trace_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpudoctor;
  (void)looksLikeRecording(std::string_view(reinterpret_cast<const char*>(data), std::min(size, kProbeBytes)));
  RecordingFacts facts;
  auto r = readRecordingFromMemory(reinterpret_cast<const char*>(data), size, "fuzz.gdrec", &facts);
  if (!r.ok()) return 0;
  fuzzPipeline(std::move(r.value()));
  return 0;
}
