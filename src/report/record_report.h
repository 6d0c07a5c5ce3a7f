// `gpudoctor record`'s report: one line per recording (what the reader found in it) and the JSON
// document of the run (the job, its recordings, and the processes that left none).
#pragma once
#include <string>
#include <vector>

#include "model/recording_facts.h"

namespace gpudoctor {

// "  NAME  rank R  12.3 MB  1,234 kernels  ... steps (...)" and a newline.
std::string renderRecordingLine(const RecordingSummary& s);

// The run record reports in --json.
struct RecordRun {
  std::string command, out;  // the job's command line, the absolute out directory
  int job_exit_code = 0;
  double seconds = 0;
  std::vector<RecordingSummary> recordings;        // those read, in name order
  std::vector<std::string> partial, errors, idle;  // files left unfinished, errors, idle notes
};

std::string renderRecordJson(const RecordRun& r);

}  // namespace gpudoctor
