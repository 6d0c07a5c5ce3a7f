// Byte sizes as users type them on a command line ("4K", "256M", "1.5G", "4096"): binary multiples,
// because that is what file systems and tar report.
#pragma once
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "common/result.h"

namespace gpudoctor {

// Parses N, N.F with an optional K/M/G/T (or KiB, MB, ...) suffix into bytes; errors name the text.
inline Result<uint64_t> parseByteSize(const std::string& text) {
  const char* s = text.c_str();
  char* end = nullptr;
  double v = std::strtod(s, &end);
  if (end == s || v < 0) return Error{"\"" + text + "\" is not a size (examples: 4096, 64K, 256M, 2G)"};
  std::string unit(end);
  double mult = 1;
  if (!unit.empty()) {
    char u = static_cast<char>(std::toupper(static_cast<unsigned char>(unit[0])));
    std::string rest = unit.substr(1);
    if (rest != "" && rest != "B" && rest != "iB" && rest != "b") return Error{"\"" + text + "\" has an unknown unit"};
    if (u == 'K')
      mult = 1024.0;
    else if (u == 'M')
      mult = 1024.0 * 1024;
    else if (u == 'G')
      mult = 1024.0 * 1024 * 1024;
    else if (u == 'T')
      mult = 1024.0 * 1024 * 1024 * 1024;
    else if (u == 'B' && rest.empty())
      mult = 1;
    else
      return Error{"\"" + text + "\" has an unknown unit"};
  }
  double bytes = v * mult;
  if (bytes > 1.8e19) return Error{"\"" + text + "\" is too large"};
  return static_cast<uint64_t>(bytes);
}

}  // namespace gpudoctor
