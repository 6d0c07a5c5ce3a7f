#include "common/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace gpudoctor {

Status writeFileAtomic(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  std::error_code ec;
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return Error{path + ": cannot write: " + std::strerror(errno)};
    f.write(text.data(), static_cast<std::streamsize>(text.size()));
    f.flush();
    if (!f) {
      Error e{path + ": write failed: " + std::strerror(errno)};
      fs::remove(tmp, ec);
      return e;
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    Error e{path + ": cannot rename into place: " + ec.message()};
    fs::remove(tmp, ec);
    return e;
  }
  return {};
}

Result<std::string> readWholeFile(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Error{path + ": cannot open: " + std::strerror(errno)};
  std::string text;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  bool bad = std::ferror(f);
  std::fclose(f);
  if (bad) return Error{path + ": read error"};
  return text;
}

}  // namespace gpudoctor
