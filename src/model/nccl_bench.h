// One row of `gpudoctor nccl bench` (nccl-tests' columns): a collective at one size, out of place and
// in place. Plain data shared by the benchmark (gpu/), which fills it, and the report, which renders it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gpudoctor {

struct NcclBenchRow {
  std::string collective, dtype, redop;
  int64_t bytes = 0, count = 0;
  int root = -1;
  double time_us[2] = {0, 0};  // out-of-place, in-place (0: not measured)
  double algbw[2] = {0, 0}, busbw[2] = {0, 0};
  int64_t wrong[2] = {0, 0};  // elements differing from the exact expectation (all ranks)
};

// Elements that differed from the expectation, over all rows, in and out of place.
inline int64_t wrongElements(const std::vector<NcclBenchRow>& rows) {
  int64_t wrong = 0;
  for (const auto& r : rows) wrong += r.wrong[0] + r.wrong[1];
  return wrong;
}

// nccl-tests' "Avg bus bandwidth": the mean out-of-place bus bandwidth over the rows (0 for none).
inline double averageBusBandwidth(const std::vector<NcclBenchRow>& rows) {
  double sum = 0;
  for (const auto& r : rows) sum += r.busbw[0];
  return rows.empty() ? 0.0 : sum / static_cast<double>(rows.size());
}

}  // namespace gpudoctor
