// Reads a `gpudoctor record` recording (.gdrec, plain or gzip; model/recording.h) into a
// RankTrace, so analyze, checklist, compare and the what-if replay work on it as on a Kineto trace.
//
// What a recording has and a Kineto trace does not: every CUDA process, whatever its framework,
// without the profiler's host cost. What it lacks: framework operators (no cpu_op events, so no
// dtypes, no loader or optimizer ranges) unless the job emits NVTX ranges. Steps come from NVTX
// ranges matching the recording's --nvtx-step pattern (default: ProfilerStep#N), else from the
// periodicity of the main thread's launches (sources/record/periodic_steps.h), else there are none.
#pragma once
#include <string>
#include <string_view>

#include "common/result.h"
#include "model/trace.h"

namespace gpudoctor {

// What the reader found besides the trace, for `record`'s summary and the tests.
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

// True when head (a file's first bytes, decompressed) starts like a recording.
bool looksLikeRecording(std::string_view head);

Result<RankTrace> readRecording(const std::string& path, RecordingFacts* facts = nullptr);
// The same from memory (the fuzzer, tests).
Result<RankTrace> readRecordingFromMemory(const char* data, size_t size, const std::string& name,
                                          RecordingFacts* facts = nullptr);

}  // namespace gpudoctor
