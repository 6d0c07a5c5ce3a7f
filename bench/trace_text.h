// Text surgery on Kineto trace events, shared by the benchmark generators (inflate_trace,
// fleet_traces): they rewrite numbers in place instead of re-serializing, so every other byte of the
// real trace is kept.
#pragma once
#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sources/kineto/json_scan.h"

namespace gpudoctor::bench {

// ns as Kineto's microseconds with three decimals ("-12.345").
inline std::string formatMicros(int64_t ns) {
  bool neg = ns < 0;
  uint64_t a = neg ? static_cast<uint64_t>(-ns) : static_cast<uint64_t>(ns);
  return fmt::format("{}{}.{:03}", neg ? "-" : "", a / 1000, a % 1000);
}

// Position and length of the number after the first `key` at or after `from` in ev; npos when none.
inline std::pair<size_t, size_t> numberAfter(const std::string& ev, std::string_view key, size_t from = 0) {
  for (size_t pos = ev.find(key, from); pos != std::string::npos; pos = ev.find(key, pos + 1)) {
    size_t v = pos + key.size();
    while (v < ev.size() && (ev[v] == ' ' || ev[v] == ':')) ++v;
    size_t e = v;
    while (e < ev.size() && (std::isdigit(static_cast<unsigned char>(ev[e])) || ev[e] == '.' || ev[e] == '-')) ++e;
    if (e > v) return {v, e - v};
  }
  return {std::string::npos, 0};
}

// Replaces the number after each occurrence of key in ev with f(old number text).
template <class F>
void rewriteNumber(std::string& ev, std::string_view key, F f) {
  for (size_t from = 0;;) {
    auto [v, n] = numberAfter(ev, key, from);
    if (v == std::string::npos) return;
    std::string repl = f(std::string_view(ev).substr(v, n));
    ev.replace(v, n, repl);
    from = v + repl.size();
  }
}

// A trace's text cut around its traceEvents array: everything up to and including '[', each event
// object's text, and everything from the array's last byte on.
struct TraceText {
  std::string head, tail;
  std::vector<std::string> events;
};
// False when the text has no traceEvents array.
inline bool splitTrace(const std::string& text, TraceText& out) {
  size_t k = text.find("\"traceEvents\"");
  if (k == std::string::npos) return false;
  size_t open = text.find('[', k);
  if (open == std::string::npos) return false;
  size_t close = findCompositeEnd(text.data(), open, text.size());
  out.head = text.substr(0, open + 1);
  out.tail = text.substr(close - 1);
  out.events.clear();
  for (size_t p = open + 1; p < close - 1;) {
    while (p < close - 1 && text[p] != '{') ++p;
    if (p >= close - 1) break;
    size_t e = findCompositeEnd(text.data(), p, close - 1);
    out.events.emplace_back(text.substr(p, e - p));
    p = e;
  }
  return true;
}

}  // namespace gpudoctor::bench
