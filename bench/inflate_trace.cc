// Inflates a real Kineto trace into a large one for benchmarks: the trace's events are repeated
// back to back in time, with timestamps shifted exactly, step numbers renumbered and correlation,
// External id and flow ids offset per copy, so the large trace analyzes like a long real run.
//   inflate_trace IN.json[.gz] OUT.json [--target-mb 1024] [--rank R]
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/exact_time.h"
#include "sources/byte_stream.h"
#include "sources/kineto/json_scan.h"
#include "trace_text.h"

using namespace gpudoctor;

using bench::formatMicros;
using bench::rewriteNumber;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: inflate_trace IN.json[.gz] OUT.json [--target-mb N] [--rank R]\n");
    return 2;
  }
  double target_mb = 1024;
  int rank = -1;
  for (int i = 3; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--target-mb") == 0) target_mb = std::atof(argv[i + 1]);
    if (std::strcmp(argv[i], "--rank") == 0) rank = std::atoi(argv[i + 1]);
  }
  auto whole = readAllBytes(argv[1]);
  if (!whole.ok()) {
    std::fprintf(stderr, "%s\n", whole.error().message.c_str());
    return 1;
  }
  std::string text = std::move(whole.value());
  bench::TraceText tt;
  if (!bench::splitTrace(text, tt)) {
    std::fprintf(stderr, "no traceEvents\n");
    return 1;
  }
  std::string head = std::move(tt.head), tail = std::move(tt.tail);
  if (rank >= 0) {  // another rank of the same run: rewrite distributedInfo's rank
    size_t d = head.find("\"distributedInfo\"");
    size_t r = d == std::string::npos ? d : head.find("\"rank\":", d);
    if (r != std::string::npos) {
      size_t v = r + 7;
      while (head[v] == ' ') ++v;
      size_t e = v;
      while (std::isdigit(static_cast<unsigned char>(head[e]))) ++e;
      head.replace(v, e - v, std::to_string(rank));
    }
  }
  std::vector<std::string> events = std::move(tt.events);
  int64_t tmin = INT64_MAX, tmax = INT64_MIN;
  int64_t max_id = 0, max_step = 0;
  for (std::string& ev : events) {
    rewriteNumber(ev, "\"ts\"", [&](std::string_view n) {
      if (auto t = parseMicrosToNanos(n)) {
        tmin = std::min(tmin, *t);
        tmax = std::max(tmax, *t);
      }
      return std::string(n);
    });
    for (auto key : {"\"correlation\"", "\"External id\"", "\"id\""})
      rewriteNumber(ev, key, [&](std::string_view n) {
        max_id = std::max<int64_t>(max_id, parseInt64(n).value_or(0));
        return std::string(n);
      });
    size_t s = ev.find("ProfilerStep#");
    if (s != std::string::npos) max_step = std::max<int64_t>(max_step, std::atoll(ev.c_str() + s + 13));
  }
  int64_t period = tmax - tmin + 1'000'000;  // copies 1 ms apart
  size_t per_copy = 0;
  for (auto& e : events) per_copy += e.size() + 2;
  auto copies = static_cast<int64_t>(target_mb * 1e6 / static_cast<double>(per_copy)) + 1;
  FILE* out = std::fopen(argv[2], "wb");
  if (!out) {
    std::perror(argv[2]);
    return 1;
  }
  std::fwrite(head.data(), 1, head.size(), out);
  bool first = true;
  for (int64_t c = 0; c < copies; ++c) {
    for (const auto& src : events) {
      if (src.find("\"ph\": \"M\"") != std::string::npos && c > 0) continue;  // metadata once
      std::string ev = src;
      if (c > 0) {
        rewriteNumber(ev, "\"ts\"",
                      [&](std::string_view n) { return formatMicros(*parseMicrosToNanos(n) + c * period); });
        for (auto key : {"\"correlation\"", "\"External id\"", "\"id\""})
          rewriteNumber(ev, key, [&](std::string_view n) {
            return std::to_string(parseInt64(n).value_or(0) + c * (max_id + 1));
          });
        size_t s = ev.find("ProfilerStep#");
        if (s != std::string::npos) {
          size_t e = s + 13;
          while (e < ev.size() && std::isdigit(static_cast<unsigned char>(ev[e]))) ++e;
          int64_t n = std::atoll(ev.c_str() + s + 13);
          ev.replace(s + 13, e - s - 13, std::to_string(n + c * (max_step + 1)));
        }
      }
      if (!first) std::fputs(",\n", out);
      first = false;
      std::fwrite(ev.data(), 1, ev.size(), out);
    }
  }
  std::fputs("\n", out);
  std::fwrite(tail.data(), 1, tail.size(), out);
  if (std::fclose(out) != 0) {
    std::perror(argv[2]);
    return 1;
  }
  std::fprintf(stderr, "wrote %s: %lld copies of %zu events\n", argv[2], static_cast<long long>(copies), events.size());
  return 0;
}
