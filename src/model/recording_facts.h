// What the record reader finds in a recording besides its trace (sources/record/record_reader.h), and
// one recording's summary: for `record`'s report (report/record_report.h) and the tests.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace gpudoctor {

// What the reader found besides the trace.
struct RecordingFacts {
  std::string host, process, command, nvtx_step, cupti_path;
  uint64_t kernels = 0, launch_calls = 0, graph_launches = 0, graph_kernels = 0;
  uint64_t launches_without_gpu_work = 0;  // launch calls whose correlation no kernel carries
  uint64_t captured_launches = 0;          // launches during a stream capture (they run as graph kernels)
  uint64_t ranges = 0, windows = 0, dropped = 0, nested_driver_calls = 0;
  uint64_t shared_correlation_calls = 0;  // API calls whose correlation id another call also had (unlinked)
  uint64_t untimed_gpu_records = 0;       // kernels and copies CUPTI gave no times (in flight at a detach): left out
  uint64_t untimed_calls = 0;             // API calls CUPTI gave no start or end (in flight at the end): left out
  uint64_t nccl_calls = 0;                // NCCL collective calls from NCCL's NVTX payloads
  uint64_t nccl_kernels_with_calls = 0;   // NCCL kernels given their call's communicator and bytes
  std::string steps_from;                 // "nvtx", "periodicity" or "none"
  std::string steps_note;                 // why none, or the period found
  size_t steps = 0;
};

// One recording read for record's report: the file, its rank and size, and the reader's facts.
struct RecordingSummary {
  std::string file;
  int rank = -1;
  uint64_t bytes = 0;
  RecordingFacts facts;
};

}  // namespace gpudoctor
