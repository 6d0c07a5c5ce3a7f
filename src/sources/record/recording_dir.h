// A recording directory (gpudoctor record's --out) after the job: the finished recordings, the
// unfinished ones, the recorders' .error and .idle notes; and one recording read for the report.
#pragma once
#include <string>
#include <vector>

#include "common/result.h"
#include "model/recording_facts.h"

namespace gpudoctor {

// What the job's processes left in the directory, each kind sorted where it is printed in order.
struct RecordingDir {
  std::vector<std::string> done, partial, errors, idle;
};

RecordingDir listRecordingDir(const std::string& dir);

// What a recorder left in HOST-PID.error or .idle: the file's first line.
std::string recorderNote(const std::string& file);

// The name of a file in dir that a recording left (.gdrec*, .error, .idle), "" when there is none:
// record refuses an --out that holds one.
std::string recordingLeftover(const std::string& dir);

// One recording read for its summary, or the reader's error.
Result<RecordingSummary> summarizeRecording(const std::string& file);

}  // namespace gpudoctor
