// The environment of a job `gpudoctor record` runs: the caller's, less the recorder's own settings,
// plus libgpudoctor-record.so injected (CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH) and its
// settings (GPUDOCTOR_RECORD_*, read by gpu/recorder/config.cc).
#pragma once
#include <string>
#include <vector>

namespace gpudoctor {

// What record's options come to, for the recorder.
struct RecorderSettings {
  std::string lib, cupti, out_abs;  // the recorder library, CUPTI, the absolute out directory
  std::string command;              // the job's command line (shellJoin), for the recordings
  std::string nvtx_step;            // --nvtx-step, "" for the default
  double delay_s = 0, duration_s = -1;
  int signal = 0;  // the toggle signal, 0: none
  long long sample_on_ms = 0, sample_every_ms = 0, steps_first = 0, steps_last = 0;
  bool detached = false, all_api = false, sync_events = false;
};

// This process's environment with the recorder's settings (NAME=VALUE each).
std::vector<std::string> recordedJobEnvironment(const RecorderSettings& s);

// argv as one shell command line: words quoted only where the shell would read them otherwise.
std::string shellJoin(const std::vector<std::string>& v);

}  // namespace gpudoctor
