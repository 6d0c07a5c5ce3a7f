#include "common/atomic_file.h"

#include <unistd.h>

#include <cerrno>
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

}  // namespace gpudoctor
