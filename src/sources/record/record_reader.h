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
#include "model/recording_facts.h"
#include "model/trace.h"

namespace gpudoctor {

// True when head (a file's first bytes, decompressed) starts like a recording.
bool looksLikeRecording(std::string_view head);

Result<RankTrace> readRecording(const std::string& path, RecordingFacts* facts = nullptr);
// The same from memory (the fuzzer, tests).
Result<RankTrace> readRecordingFromMemory(const char* data, size_t size, const std::string& name,
                                          RecordingFacts* facts = nullptr);

}  // namespace gpudoctor
