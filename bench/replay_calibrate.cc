// Calibrates the profiler's host cost that the replay removes (ReplayEdits::host_event_overhead_ns,
// api_call_overhead_ns): replays every trace of the validation jobs (testdata/whatif: each job and
// fix traced, and timed without the profiler) with a grid of costs and prints how far the predicted
// un-profiled step is from the measured one.
//   replay_calibrate testdata/whatif
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/replay.h"
#include "sources/trace_set.h"

using namespace gpudoctor;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: replay_calibrate DIR (with measurements.json and the traces)\n");
    return 2;
  }
  std::string dir = argv[1];
  std::ifstream f(dir + "/measurements.json");
  auto m = nlohmann::json::parse(f, nullptr, false);
  if (m.is_discarded()) {
    std::fprintf(stderr, "%s/measurements.json: not valid JSON\n", dir.c_str());
    return 2;
  }
  struct Job {
    std::string name;
    double measured;
    std::vector<RankTrace> traces;
    RunAnalysis run;
  };
  std::vector<Job> jobs;
  for (const auto& e : m["entries"]) {
    std::string job = e.value("job", "");
    if (!e.contains("trace")) continue;
    auto t = readTraceSet({dir + "/" + e["trace"].get<std::string>()});
    if (!t.ok()) {
      std::fprintf(stderr, "%s\n", t.error().message.c_str());
      return 1;
    }
    Job j{job + "/" + e.value("variant", ""), e["unprofiled_step_ns_median"].get<double>(), std::move(t.value()), {}};
    jobs.push_back(std::move(j));
  }
  for (auto& j : jobs) {
    auto r = analyzeRun(j.traces, {});
    if (!r.ok()) return 1;
    j.run = std::move(r.value());
  }
  struct Fit {
    int64_t ev, call;
    double median, worst;
  } best{0, 0, 1e9, 1e9};
  for (int64_t call = 0; call <= 8000; call += 1000)
    for (int64_t ev = 0; ev <= 30000; ev += 500) {
      ReplayEdits ed;
      ed.host_event_overhead_ns = ev;
      ed.api_call_overhead_ns = call;
      std::vector<double> err;
      for (const auto& j : jobs) err.push_back(std::abs(replayRun(j.run, ed).replayed_step_ns / j.measured - 1));
      std::sort(err.begin(), err.end());
      double med = err[err.size() / 2], worst = err.back();
      if (med + worst < best.median + best.worst) best = {ev, call, med, worst};
    }
  std::printf("best: %ld ns per host event, %ld ns per API call: median |error| %.1f %%, worst %.1f %%\n", best.ev,
              best.call, 100 * best.median, 100 * best.worst);
  std::printf("%-36s %10s %10s %10s %8s\n", "job", "traced ms", "unprof ms", "predicted", "error");
  ReplayEdits ed;
  ed.host_event_overhead_ns = best.ev;
  ed.api_call_overhead_ns = best.call;
  for (const auto& j : jobs) {
    Replay base = replayRun(j.run), r = replayRun(j.run, ed);
    std::printf("%-36s %10.2f %10.2f %10.2f %+7.1f%%\n", j.name.c_str(), base.traced_step_ns / 1e6, j.measured / 1e6,
                r.replayed_step_ns / 1e6, 100 * (r.replayed_step_ns / j.measured - 1));
  }
  return 0;
}
