#include "sources/record/recording_dir.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

#include "sources/record/record_reader.h"

namespace gpudoctor {

namespace fs = std::filesystem;

RecordingDir listRecordingDir(const std::string& dir) {
  RecordingDir l;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string n = e.path().string();
    auto ends = [&](std::string_view s) {
      return n.size() >= s.size() && n.compare(n.size() - s.size(), s.size(), s) == 0;
    };
    if (ends(".gdrec"))
      l.done.push_back(n);
    else if (ends(".gdrec.partial"))
      l.partial.push_back(n);
    else if (ends(".error"))
      l.errors.push_back(n);
    else if (ends(".idle"))
      l.idle.push_back(n);
  }
  std::sort(l.idle.begin(), l.idle.end());
  std::sort(l.done.begin(), l.done.end());
  return l;
}

std::string recorderNote(const std::string& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string recordingLeftover(const std::string& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string n = e.path().filename().string();
    if (n.find(".gdrec") != std::string::npos || (n.size() > 6 && n.substr(n.size() - 6) == ".error") ||
        (n.size() > 5 && n.substr(n.size() - 5) == ".idle"))
      return n;
  }
  return "";
}

Result<RecordingSummary> summarizeRecording(const std::string& file) {
  RecordingSummary s;
  auto t = readRecording(file, &s.facts);
  if (!t.ok()) return t.error();
  s.file = file;
  s.rank = t.value().rank;
  std::error_code ec;
  s.bytes = fs::file_size(file, ec);
  return s;
}

}  // namespace gpudoctor
