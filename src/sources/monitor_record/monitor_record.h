// The monitor's recording: one JSON line per sample after a header line, appended with one write()
// per complete line. Durability: a completed write survives kill -9 (it is in the page cache), so a
// killed monitor loses at most the sample it was writing; fdatasync every `sync_every_s` (default
// 10 s) and at close bounds what a power loss can take. The reader ignores a torn last line (saying
// so) and rejects corruption anywhere else, naming the line.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "model/monitor_sample.h"

namespace gpudoctor {

// One sample as one JSON line (no newline).
std::string encodeMonitorSample(const MonitorSample& s);
// The inverse; errors say which field is wrong.
Result<MonitorSample> decodeMonitorSample(std::string_view line);

struct MonitorRecording {
  std::vector<MonitorSample> samples;
  bool torn_tail = false;  // the last line was cut short (the monitor was killed mid-write)
};

// Reads a recording. Not a recording, a corrupt line before the last, or no samples: an error naming
// the file and line.
Result<MonitorRecording> readMonitorRecording(const std::string& path);

// Appends samples to a recording; creates it with a header line when new.
class MonitorRecordWriter {
 public:
  ~MonitorRecordWriter();
  // Opens (creating or appending). An unwritable path or a file that is not a recording is an error.
  Status open(const std::string& path, double sync_every_s = 10);
  // Appends one sample with one write(); syncs when sync_every_s has passed since the last sync.
  Status append(const MonitorSample& s);
  // Syncs and closes.
  void close();

 private:
  int fd_ = -1;
  std::string path_;
  double sync_every_s_ = 10;
  int64_t last_sync_ns_ = 0;
};

}  // namespace gpudoctor
