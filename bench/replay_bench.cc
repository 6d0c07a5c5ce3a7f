// What the what-if costs next to the analysis it builds on: reads the traces, times analyzeRun and
// the rules, then the diagnosis with the what-if (graph, replays, plan), and prints seconds and the
// ratio (the what-if issue's budget: at most 20 % added to analyze).
//   replay_bench TRACE...   (e.g. a 1 GB trace from inflate_trace)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "analysis/replay/replay.h"
#include "diagnosis/diagnosis.h"
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
  // The diagnosis without the replay (facts and rules), then with it (diagnose(run): the graph built
  // once, the traced, un-profiled and per-fix replays, the plan's rounds).
  t0 = std::chrono::steady_clock::now();
  Diagnosis plain = diagnose(buildFacts(run.value(), {}), Thresholds::defaults());
  double rules_s = since(t0);
  t0 = std::chrono::steady_clock::now();
  Diagnosis full = diagnose(run.value(), Thresholds::defaults());
  double full_s = since(t0);
  t0 = std::chrono::steady_clock::now();
  ReplayModel model(run.value());
  double build_s = since(t0);
  t0 = std::chrono::steady_clock::now();
  Replay r = model.replay();
  double replay_s = since(t0);
  const double what_if_s = std::max(0.0, full_s - rules_s), analyze_total_s = read_s + analyze_s + rules_s;
  std::printf(
      "%llu events: read %.2f s, analyze %.2f s, rules %.2f s; diagnosis with the what-if %.2f s "
      "(graph %.2f s, one replay %.3f s; %zu findings predicted, %zu plan steps)\n",
      static_cast<unsigned long long>(events), read_s, analyze_s, rules_s, full_s, build_s, replay_s,
      static_cast<size_t>(std::count_if(full.findings.begin(), full.findings.end(),
                                        [](const Finding& f) { return f.what_if.available; })),
      full.plan.size());
  std::printf(
      "what-if over analyze without it: +%.1f %% (replay %s, worst step error %.4f %%; %zu findings "
      "without it)\n",
      100 * what_if_s / analyze_total_s, r.available ? "available" : r.reason.c_str(), 100 * r.worst_error,
      plain.findings.size());
  return r.available ? 0 : 1;
}
