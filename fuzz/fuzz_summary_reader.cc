// libFuzzer target: arbitrary bytes as a rank-summary document (sources/summary) and, when they
// parse, the cross-rank analyses (analysis/fleet) and both fleet reports. Seeds: summaries written
// by analyze --summary-out (fuzz/seeds_summary/). Any crash, hang, leak or UB report is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "analysis/fleet.h"
#include "report/fleet_report.h"
#include "sources/summary/summary_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpudoctor;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)isSummaryHead(text);
  auto d = parseSummaryText(text, "fuzz.gdsum");
  if (!d.ok()) return 0;
  (void)missingRanks(d.value());
  auto f = analyzeFleet(d.value());
  if (!f.ok()) return 0;
  (void)renderFleetReport(f.value(), {});
  (void)renderFleetJson(f.value(), {});
  return 0;
}
