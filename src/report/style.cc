#include "report/style.h"

#include <algorithm>

namespace gpudoctor {

namespace {
// SGR codes: bold, red, yellow, dim, green; each span ends with a full reset.
std::string_view code(Tone t) {
  switch (t) {
    case Tone::kHeading:
      return "\x1b[1m";
    case Tone::kCritical:
      return "\x1b[31m";
    case Tone::kWarning:
      return "\x1b[33m";
    case Tone::kInfo:
      return "\x1b[2m";
    case Tone::kGood:
      return "\x1b[32m";
  }
  return "";
}
constexpr std::string_view kReset = "\x1b[0m";
}  // namespace

std::string paint(std::string_view text, Tone tone, bool color) {
  if (!color || text.empty()) return std::string(text);
  std::string o;
  o.reserve(text.size() + 10);
  o.append(code(tone)).append(text).append(kReset);
  return o;
}

std::string paintFront(std::string_view text, size_t n, Tone tone, bool color) {
  n = std::min(n, text.size());
  return paint(text.substr(0, n), tone, color) + std::string(text.substr(n));
}

Tone severityTone(Severity s) {
  switch (s) {
    case Severity::kCritical:
      return Tone::kCritical;
    case Severity::kWarning:
      return Tone::kWarning;
    case Severity::kInfo:
      return Tone::kInfo;
    case Severity::kOk:
      return Tone::kGood;
  }
  return Tone::kInfo;
}

}  // namespace gpudoctor
