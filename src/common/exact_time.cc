#include "common/exact_time.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

namespace gpudoctor {

namespace {
bool isDigit(char c) { return c >= '0' && c <= '9'; }

std::string_view trimRight(std::string_view t) {
  while (!t.empty() && (t.back() == ' ' || t.back() == '\n' || t.back() == '\r' || t.back() == '\t'))
    t.remove_suffix(1);
  return t;
}
}  // namespace

std::optional<int64_t> parseInt64(std::string_view t) {
  t = trimRight(t);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || p != t.data() + t.size()) return std::nullopt;
  return v;
}

std::optional<int64_t> parseMicrosToNanos(std::string_view t) {
  t = trimRight(t);
  size_t i = 0;
  bool neg = false;
  if (i < t.size() && t[i] == '-') {
    neg = true;
    ++i;
  }
  if (i >= t.size() || !isDigit(t[i])) return std::nullopt;
  // Integer part: at most 16 digits keeps micros * 1000 inside int64 (9.2e18).
  uint64_t whole = 0;
  size_t digits = 0;
  for (; i < t.size() && isDigit(t[i]); ++i, ++digits) {
    if (digits >= 16) return std::nullopt;
    whole = whole * 10 + static_cast<uint64_t>(t[i] - '0');
  }
  uint64_t frac = 0;  // nanoseconds from the first three decimals
  bool round_up = false;
  if (i < t.size() && t[i] == '.') {
    ++i;
    int n = 0;
    if (i >= t.size() || !isDigit(t[i])) return std::nullopt;
    for (; i < t.size() && isDigit(t[i]); ++i, ++n) {
      if (n < 3)
        frac = frac * 10 + static_cast<uint64_t>(t[i] - '0');
      else if (n == 3)
        round_up = t[i] >= '5';
    }
    for (; n < 3; ++n) frac *= 10;
  }
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    // Exponent form is rare (some writers use it for large integers); a double is exact enough
    // only when the value is small, so accept it through strtod and check the range.
    std::string s(t);
    char* end = nullptr;
    double us = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || !std::isfinite(us)) return std::nullopt;
    double ns = std::round(us * 1000.0);
    if (std::fabs(ns) > 9.2e18) return std::nullopt;
    return static_cast<int64_t>(ns);
  }
  if (i != t.size()) return std::nullopt;
  uint64_t ns = whole * 1000 + frac + (round_up ? 1 : 0);
  if (ns > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
  return neg ? -static_cast<int64_t>(ns) : static_cast<int64_t>(ns);
}

}  // namespace gpudoctor
