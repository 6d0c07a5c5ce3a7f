// Text surgery on Kineto trace events, shared by the benchmark generators (inflate_trace,
// fleet_traces): they rewrite numbers in place instead of re-serializing, so every other byte of the
// real trace is kept.
#pragma once
#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

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

}  // namespace gpudoctor::bench
