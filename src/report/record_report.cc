#include "report/record_report.h"

#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/thousands.h"

namespace gpudoctor {

namespace {

// printf's formatting into a string.
__attribute__((format(printf, 1, 2))) std::string formatted(const char* format, ...) {
  va_list args, again;
  va_start(args, format);
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::string out(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, format, again);
  va_end(again);
  return out;
}

}  // namespace

std::string renderRecordingLine(const RecordingSummary& s) {
  const RecordingFacts& facts = s.facts;
  const std::string name = std::filesystem::path(s.file).filename().string();
  std::string rank = s.rank >= 0 ? "rank " + std::to_string(s.rank) : std::string("no rank");
  std::string captured =
      facts.captured_launches != 0
          ? ", " + groupThousands(static_cast<double>(facts.captured_launches)) + " captured into graphs"
          : "";
  std::string windows = facts.windows > 1 ? "  " + std::to_string(facts.windows) + " attach windows" : "";
  if (facts.nccl_calls != 0)
    captured += ", " + groupThousands(static_cast<double>(facts.nccl_calls)) + " NCCL calls (" +
                groupThousands(static_cast<double>(facts.nccl_kernels_with_calls)) + " NCCL kernels given their bytes)";
  if (facts.untimed_gpu_records != 0)  // CUPTI gave them no times: in flight when the recorder detached
    captured += ", " + groupThousands(static_cast<double>(facts.untimed_gpu_records)) + " GPU records without times";
  if (facts.untimed_calls != 0)
    captured += ", " + groupThousands(static_cast<double>(facts.untimed_calls)) + " calls without times";
  return formatted(
      "  %s  %s%s  %.1f MB  %s kernels  %s launch calls (%s without GPU work%s)  %zu steps (%s%s%s)%s\n", name.c_str(),
      rank.c_str(), windows.c_str(), static_cast<double>(s.bytes) / 1e6,
      groupThousands(static_cast<double>(facts.kernels)).c_str(),
      groupThousands(static_cast<double>(facts.launch_calls)).c_str(),
      groupThousands(static_cast<double>(facts.launches_without_gpu_work)).c_str(), captured.c_str(), facts.steps,
      facts.steps_from.c_str(), facts.steps_note.empty() ? "" : ": ", facts.steps_note.c_str(),
      facts.dropped != 0 ? ("  " + groupThousands(static_cast<double>(facts.dropped)) + " records DROPPED").c_str()
                         : "");
}

std::string renderRecordJson(const RecordRun& r) {
  nlohmann::json recordings = nlohmann::json::array();
  for (const RecordingSummary& s : r.recordings) {
    const RecordingFacts& facts = s.facts;
    recordings.push_back({{"file", s.file},
                          {"rank", s.rank},
                          {"bytes", s.bytes},
                          {"kernels", facts.kernels},
                          {"launch_calls", facts.launch_calls},
                          {"launches_without_gpu_work", facts.launches_without_gpu_work},
                          {"captured_launches", facts.captured_launches},
                          {"graph_launches", facts.graph_launches},
                          {"graph_kernels", facts.graph_kernels},
                          {"ranges", facts.ranges},
                          {"windows", facts.windows},
                          {"steps", facts.steps},
                          {"steps_from", facts.steps_from},
                          {"steps_note", facts.steps_note},
                          {"dropped_records", facts.dropped},
                          {"shared_correlation_calls", facts.shared_correlation_calls},
                          {"untimed_gpu_records", facts.untimed_gpu_records},
                          {"untimed_calls", facts.untimed_calls},
                          {"nccl_calls", facts.nccl_calls},
                          {"nccl_kernels_with_calls", facts.nccl_kernels_with_calls},
                          {"process", facts.process}});
  }
  nlohmann::json j = {{"tool", "gpudoctor record"},
                      {"schema_version", 1},
                      {"command", r.command},
                      {"out", r.out},
                      {"job_exit_code", r.job_exit_code},
                      {"seconds", r.seconds},
                      {"recordings", recordings},
                      {"partial", r.partial},
                      {"errors", r.errors},
                      {"idle", r.idle}};
  return j.dump(2) + "\n";
}

}  // namespace gpudoctor
