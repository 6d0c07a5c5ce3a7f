// The compact input shapes the readers keep for host operations (Event::shapes): "64x512,512x2048,-",
// one shape per input, '-' for an input without one.
#pragma once
#include <cstdint>
#include <string_view>

namespace gpudoctor {

// The element count of the first input's shape ("6144" -> 6144, "64x512,..." -> 32768); -1 when it has
// none ("-", empty) or it does not parse.
inline int64_t firstShapeElements(std::string_view shapes) {
  constexpr int64_t kMax = int64_t{1} << 50;
  std::string_view first = shapes.substr(0, shapes.find(','));
  if (first.empty() || first == "-") return -1;
  int64_t n = 1, v = 0;
  bool digit = false;
  auto times = [&]() {  // n *= v, false past kMax
    if (!digit || (v != 0 && n > kMax / v)) return false;
    n *= v;
    v = 0;
    digit = false;
    return true;
  };
  for (char c : first) {
    if (c == 'x') {
      if (!times()) return -1;
    } else if (c >= '0' && c <= '9' && v <= kMax) {
      v = v * 10 + (c - '0');
      digit = true;
    } else {
      return -1;
    }
  }
  return times() ? n : -1;
}

}  // namespace gpudoctor
