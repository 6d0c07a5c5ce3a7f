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
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);  // through symlinks
  if (!ec && fs::exists(st) && !fs::is_regular_file(st)) {
    // A device or a pipe (/dev/null, /dev/stdout, a FIFO): written in place. A rename would replace
    // the node itself with a regular file (as root, /dev/null for every process on the machine).
    if (fs::is_directory(st)) return Error{path + ": is a directory"};
    std::ofstream f(path, std::ios::binary);
    if (!f) return Error{path + ": cannot write: " + std::strerror(errno)};
    f.write(text.data(), static_cast<std::streamsize>(text.size()));
    f.flush();
    if (!f) return Error{path + ": write failed: " + std::strerror(errno)};
    return {};
  }
  // A symlink keeps pointing where it did: its target is replaced, not the link.
  std::string target = path;
  if (fs::is_symlink(fs::symlink_status(path, ec))) {
    const fs::path real = fs::canonical(path, ec);
    if (!ec) target = real.string();
  }
  std::string tmp = target + ".tmp." + std::to_string(::getpid());
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
  fs::rename(tmp, target, ec);
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
