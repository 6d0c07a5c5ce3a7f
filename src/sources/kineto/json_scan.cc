#include "sources/kineto/json_scan.h"

#include <array>
#include <cstring>

namespace gpudoctor {
namespace {

// 1 for the bytes that matter outside strings.
constexpr std::array<unsigned char, 256> kStructural = [] {
  std::array<unsigned char, 256> t{};
  t['"'] = 1;
  t['{'] = 1;
  t['}'] = 1;
  t['['] = 1;
  t[']'] = 1;
  return t;
}();

// Index of the closing quote of a string whose body starts at p, or kNoEnd.
inline size_t closeQuote(const char* buf, size_t p, size_t len) {
  for (;;) {
    const void* q = std::memchr(buf + p, '"', len - p);
    if (!q) return kNoEnd;
    size_t i = static_cast<const char*>(q) - buf;
    // Escaped when preceded by an odd number of backslashes.
    size_t k = i;
    while (k > p && buf[k - 1] == '\\') --k;
    if (((i - k) & 1) == 0) return i;
    p = i + 1;
  }
}

}  // namespace

size_t findStringEnd(const char* buf, size_t pos, size_t len) {
  size_t q = closeQuote(buf, pos + 1, len);
  return q == kNoEnd ? kNoEnd : q + 1;
}

size_t findCompositeEnd(const char* buf, size_t pos, size_t len) {
  long depth = 0;
  const auto* u = reinterpret_cast<const unsigned char*>(buf);
  size_t i = pos;
  while (i < len) {
    while (i < len && !kStructural[u[i]]) ++i;
    if (i >= len) break;
    char c = buf[i];
    if (c == '"') {
      size_t q = closeQuote(buf, i + 1, len);
      if (q == kNoEnd) return kNoEnd;
      i = q + 1;
      continue;
    }
    if (c == '{' || c == '[') {
      ++depth;
    } else if (--depth == 0) {
      return i + 1;
    }
    ++i;
  }
  return kNoEnd;
}

size_t findValueEnd(const char* buf, size_t pos, size_t len, bool at_eof) {
  char c = buf[pos];
  if (c == '{' || c == '[') return findCompositeEnd(buf, pos, len);
  if (c == '"') return findStringEnd(buf, pos, len);
  size_t i = pos;
  while (i < len) {
    char d = buf[i];
    if (d == ',' || d == '}' || d == ']' || d == ' ' || d == '\n' || d == '\r' || d == '\t') return i;
    ++i;
  }
  return at_eof ? len : kNoEnd;
}

}  // namespace gpudoctor
