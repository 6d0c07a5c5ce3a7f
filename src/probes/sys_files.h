// Reading the small text files of /proc and /sys the probes are built on: the whole file, or its
// first line trimmed. A missing or unreadable file is "not there" (false / empty), never an error:
// which files exist differs across kernels, drivers and containers.
#pragma once
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace gpudoctor {

// The whole file into `out`; false when it cannot be read.
inline bool readSysFile(const std::filesystem::path& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

// The first line without trailing blanks; "" when the file cannot be read.
inline std::string readSysLine(const std::filesystem::path& path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

}  // namespace gpudoctor
