// What the replay costs next to the analysis it builds on: reads the traces, times analyzeRun, then
// replayRun unedited and with an edit, and prints seconds and the ratio (the what-if issue's budget:
// the replay and its edits add at most 20 % to analyze).
//   replay_bench TRACE...   (e.g. a 1 GB trace from inflate_trace)
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "analysis/replay.h"
#include "sources/trace_set.h"

using namespace gpudoctor;

namespace {
double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: replay_bench TRACE...\n");
    return 2;
  }
  std::vector<std::string> paths(argv + 1, argv + argc);
  auto t0 = std::chrono::steady_clock::now();
  auto traces = readTraceSet(paths);
  if (!traces.ok()) {
    std::fprintf(stderr, "%s\n", traces.error().message.c_str());
    return 1;
  }
  double read_s = since(t0);
  uint64_t events = 0;
  for (const auto& t : traces.value()) events += t.events.size();
  t0 = std::chrono::steady_clock::now();
  auto run = analyzeRun(traces.value(), {});
  if (!run.ok()) {
    std::fprintf(stderr, "%s\n", run.error().message.c_str());
    return 1;
  }
  double analyze_s = since(t0);
  t0 = std::chrono::steady_clock::now();
  Replay r = replayRun(run.value());
  double replay_s = since(t0);
  ReplayEdits ed;
  ed.kernel_scale.fill(0.5);
  ed.host_event_overhead_ns = 7000;
  t0 = std::chrono::steady_clock::now();
  Replay e = replayRun(run.value(), ed);
  double edit_s = since(t0);
  std::printf("%llu events: read %.2f s, analyze %.2f s, replay %.2f s, edited replay %.2f s\n",
              static_cast<unsigned long long>(events), read_s, analyze_s, replay_s, edit_s);
  std::printf("replay + one edit over read + analyze: %.1f %% (replay %s, worst step error %.4f %%)\n",
              100 * (replay_s + edit_s) / (read_s + analyze_s), r.available ? "available" : r.reason.c_str(),
              100 * r.worst_error);
  return e.available ? 0 : 1;
}
