// Calibrates the profiler's host cost that the replay removes (ReplayEdits::host_event_overhead_ns,
// api_call_overhead_ns): replays every trace of the validation jobs (testdata/whatif: each job and
// fix traced, and timed without the profiler) with a grid of costs and prints how far the predicted
// un-profiled step is from the measured one.
// Then scores the fixes the replay can edit today against their measured speedups (un-profiled
// base step / un-profiled step after the fix), each prediction = replayed base / replayed edit,
// both with the fitted profiler cost removed.
// With --max-median-error PCT / --max-worst-error PCT it exits 1 when the fix scores are worse (a
// regression gate for ctest on the committed data; the fitted cost is in-sample: one parameter).
//   replay_calibrate testdata/whatif [--holdout] [--paths] [--host-path] [--max-median-error 10]
//                    [--max-worst-error 40] [--max-outside-band 25] [--max-unprofiled-worst 30]
//                    [--speed-gauge gap|launch|dispatch] [--costs EVENT_NS,CALL_NS,GAP_NS,EXPONENT]
//                    [--fit-on JOB,JOB,...]
// The fit moves the per-event, per-GPU-gap and speed-exponent costs; the per-call costs are measured
// (scripts/probes/profiler_call_cost.py, scripts/probes/profiler_api_cost.py) and stay as given. --fit-on fits on
// the named jobs' traces alone and scores the others with that fit (held out).
// --holdout also fits each job's costs without its own traces; --paths prints, under each fix, the
// critical path of the edited base's replayed step by category (ms) and the edit against the variant's own
// trace; --host-path each trace's host path (its GPU work free) and autocast's casts per step.
// With DIR/retime.json (scripts/validation/whatif_jobs.py --retime: the same un-profiled timing in fresh
// processes), a fix's measured speedup is the median over processes of base / variant timed in the
// same process (the trace's process and each re-time round), and its band spans them and pass 1.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/compare.h"
#include "analysis/replay/replay.h"
#include "diagnosis/diagnosis.h"
#include "diagnosis/what_if.h"
#include "sources/trace_set.h"

using namespace gpudoctor;

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    std::fprintf(
        argc < 2 ? stderr : stdout,
        "usage: replay_calibrate DIR [--holdout] [--paths] [--host-path] [--max-median-error PCT] "
        "[--max-worst-error PCT] [--max-outside-band PCT] [--max-unprofiled-worst PCT]\n"
        "       [--speed-gauge gap|launch|dispatch] [--costs EVENT_NS,CALL_NS,GAP_NS,EXPONENT] [--fit-on JOB,...]\n"
        "Scores the what-if replay on a validation folder (measurements.json, traces, retime.json):\n"
        "the un-profiled step of each trace, each fix's predicted speedup against the measured one,\n"
        "and each job's plan. --speed-gauge: what tells the host's speed (the gaps before host events, the\n"
        "median kernel-launch call, or the median dispatch inside operators); --costs: the profiler's\n"
        "costs to score instead of the committed ones (the plans keep the committed ones); --fit-on: fit\n"
        "on these jobs alone, score the rest as held out.\n"
        "Example: replay_calibrate testdata/whatif --paths\n");
    return argc < 2 ? 2 : 0;
  }
  std::string dir = argv[1];
  double max_median = -1, max_worst = -1, max_outside = -1, max_unprofiled = -1;
  bool holdout = false, paths = false, host_path = false;
  ProfilerSpeedGauge gauge = kProfilerSpeedGauge;
  std::optional<std::tuple<long, long, long, double>> costs;  // --costs: instead of the committed constants
  std::vector<std::string> fit_on;                            // --fit-on: the jobs to fit on
  for (int a = 2; a < argc; a += 2) {
    std::string flag = argv[a];
    if (flag == "--holdout" || flag == "--paths" || flag == "--host-path") {
      (flag == "--holdout" ? holdout : flag == "--paths" ? paths : host_path) = true;
      --a;
      continue;
    }
    if (a + 1 >= argc) {
      std::fprintf(stderr, "replay_calibrate: %s needs a value\n", flag.c_str());
      return 2;
    }
    if (flag == "--speed-gauge") {
      const std::string g = argv[a + 1];
      if (g != "gap" && g != "launch" && g != "dispatch") {
        std::fprintf(stderr, "replay_calibrate: --speed-gauge %s: not gap, launch or dispatch\n", g.c_str());
        return 2;
      }
      gauge = g == "gap"      ? ProfilerSpeedGauge::kHostGapP25
              : g == "launch" ? ProfilerSpeedGauge::kLaunchCallP50
                              : ProfilerSpeedGauge::kDispatchP50;
      continue;
    }
    if (flag == "--fit-on") {
      for (std::string_view rest = argv[a + 1]; !rest.empty();) {
        const size_t comma = rest.find(',');
        const std::string_view name = rest.substr(0, comma);
        if (name.empty()) {
          std::fprintf(stderr, "replay_calibrate: --fit-on %s: an empty job name\n", argv[a + 1]);
          return 2;
        }
        fit_on.emplace_back(name);
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      }
      continue;
    }
    if (flag == "--costs") {
      long ev = 0, call = 0, gap = 0;
      double ex = 0;
      char tail = 0;
      if (std::sscanf(argv[a + 1], "%ld,%ld,%ld,%lf%c", &ev, &call, &gap, &ex, &tail) != 4 || ev < 0 || call < 0 ||
          gap < 0 || ex < 0 || ex > 3 || ev > 100000 || call > 100000 || gap > 100000) {
        std::fprintf(stderr, "replay_calibrate: --costs %s: not EVENT_NS,CALL_NS,GAP_NS,EXPONENT\n", argv[a + 1]);
        return 2;
      }
      costs = {ev, call, gap, ex};
      continue;
    }
    char* end = nullptr;
    double v = std::strtod(argv[a + 1], &end);
    if (*end != '\0' || v < 0 || v > 1000) {
      std::fprintf(stderr, "replay_calibrate: %s %s: not a percentage\n", flag.c_str(), argv[a + 1]);
      return 2;
    }
    if (flag == "--max-median-error")
      max_median = v;
    else if (flag == "--max-worst-error")
      max_worst = v;
    else if (flag == "--max-outside-band")
      max_outside = v;
    else if (flag == "--max-unprofiled-worst")
      max_unprofiled = v;
    else {
      std::fprintf(stderr, "replay_calibrate: unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  std::ifstream f(dir + "/measurements.json");
  auto m = nlohmann::json::parse(f, nullptr, false);
  if (m.is_discarded()) {
    std::fprintf(stderr, "%s/measurements.json: not valid JSON\n", dir.c_str());
    return 2;
  }
  struct Job {
    std::string job, variant;
    std::string name;
    double measured;
    double other;                  // the other timed pass (pass 1, interleaved with the job's other variants)
    std::map<int, double> rounds;  // retime.json: the step's median in each re-time round's process
    std::vector<RankTrace> traces;
    RunAnalysis run;
    std::unique_ptr<ReplayModel> model;
    bool compiled_graphs = false;  // the variant's CUDA graphs are torch.compile's (the model alone graphed)
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
    // The measured step: pass 2's re-timing, which ran alone right before the trace was recorded
    // (pass 1 held all of the job's variants at once: its host-bound steps ran up to 1.5x slower);
    // pass 1's median where there is no re-timing.
    const double pass1 = e["unprofiled_step_ns_median"].get<double>();
    const double pass2 = e.value("unprofiled_recheck_step_ns_median", 0.0);
    Job j{job,
          e.value("variant", ""),
          job + "/" + e.value("variant", ""),
          pass2 > 0 ? pass2 : pass1,
          pass1,
          {},
          std::move(t.value()),
          {},
          nullptr};
    if (e.contains("model") && e["model"].is_object() && e["model"].contains("cuda_graphs") &&
        e["model"]["cuda_graphs"].is_string())
      j.compiled_graphs = e["model"]["cuda_graphs"].get<std::string>().starts_with("torch.compile");
    jobs.push_back(std::move(j));
  }
  // The re-time rounds, where the folder has them.
  bool retimed = false;
  if (std::ifstream rf(dir + "/retime.json"); rf) {
    auto rt = nlohmann::json::parse(rf, nullptr, false);
    if (rt.is_discarded() || !rt.contains("jobs")) {
      std::fprintf(stderr, "%s/retime.json: not valid JSON\n", dir.c_str());
      return 2;
    }
    for (auto& j : jobs) {
      if (!rt["jobs"].contains(j.job) || !rt["jobs"][j.job].contains(j.variant)) continue;
      for (const auto& r : rt["jobs"][j.job][j.variant])
        if (r.contains("median") && r.contains("round")) j.rounds[r["round"].get<int>()] = r["median"].get<double>();
      retimed |= !j.rounds.empty();
    }
  }
  // A fix's measured speedups, one per process that timed both the base and the variant: the
  // trace's (pass 2) first, then each re-time round's.
  auto speedups = [](const Job& base, const Job& v) {
    std::vector<double> s = {base.measured / v.measured};
    for (const auto& [round, ns] : v.rounds)
      if (auto it = base.rounds.find(round); it != base.rounds.end() && ns > 0) s.push_back(it->second / ns);
    return s;
  };
  auto medianOf = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  };
  auto measuredSpeedup = [&](const Job& base, const Job& v) { return medianOf(speedups(base, v)); };
  for (auto& j : jobs) {
    auto r = analyzeRun(j.traces, {});
    if (!r.ok()) return 1;
    j.run = std::move(r.value());
    j.model = std::make_unique<ReplayModel>(j.run);
  }
  // The profiler's cost fitted by coordinate descent (each parameter in turn over its grid, until
  // none moves), minimizing the mean |error| of the un-profiled steps of `use`d traces.
  struct Params {
    int64_t ev = kProfilerHostEventNs, call = kProfilerApiCallNs, gap = kProfilerGpuGapNs;
    int64_t speed = std::llround(100 * kProfilerSpeedExponent);  // x 100
    int64_t* at(int k) { return k == 0 ? &ev : k == 1 ? &call : k == 2 ? &gap : &speed; }
  };
  Params committed;
  if (costs) {
    committed.ev = std::get<0>(*costs), committed.call = std::get<1>(*costs), committed.gap = std::get<2>(*costs);
    committed.speed = std::llround(100 * std::get<3>(*costs));
  }
  constexpr int kParams = 4;
  auto editsOf = [gauge](const Params& p, const Job& j) {
    ReplayEdits ed = unprofiledEdits();  // the CUDA graph constants as committed
    ed.host_event_overhead_ns = p.ev;
    ed.api_call_overhead_ns = p.call;
    ed.gpu_gap_overhead_ns = p.gap;
    ed.rank_profiler_scale = profilerSpeedScale(*j.model, static_cast<double>(p.speed) / 100, gauge);
    return ed;
  };
  auto errors = [&](const Params& p, const std::function<bool(const Job&)>& use) {
    std::vector<double> err;
    for (const auto& j : jobs)
      if (use(j)) err.push_back(std::abs(j.model->replay(editsOf(p, j)).replayed_step_ns / j.measured - 1));
    return err;
  };
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0 : s / static_cast<double>(v.size());
  };
  auto fit = [&](const std::function<bool(const Job&)>& use) {
    Params p = committed;
    double cost = mean(errors(p, use));
    for (int round = 0; round < 6; ++round) {
      bool moved = false;
      for (int which = 0; which < kParams; ++which) {
        if (which == 1) continue;  // the per-call cost is measured, not fitted
        int64_t* v = p.at(which);
        const int64_t step = which == 2   ? 100
                             : which == 3 ? 10
                                          : 250,
                      hi = which == 0   ? 12000
                           : which == 1 ? 10000
                           : which == 2 ? 8000
                                        : 150;
        for (int64_t x = 0; x <= hi; x += step) {
          Params q = p;
          *q.at(which) = x;
          double c = mean(errors(q, use));
          if (c < cost - 1e-12) cost = c, *v = x, moved = true;
        }
      }
      if (!moved) break;
    }
    return p;
  };
  auto all = [](const Job&) { return true; };
  if (!fit_on.empty()) {  // fitted on the named jobs alone; the others held out
    for (const auto& name : fit_on)
      if (std::none_of(jobs.begin(), jobs.end(), [&](const Job& j) { return j.job == name; })) {
        std::fprintf(stderr, "replay_calibrate: --fit-on: no job %s in %s\n", name.c_str(), dir.c_str());
        return 2;
      }
    auto in = [&](const Job& j) { return std::find(fit_on.begin(), fit_on.end(), j.job) != fit_on.end(); };
    auto out = [&](const Job& j) { return !in(j); };
    const Params p = fit(in);
    auto line = [&](const char* what, std::vector<double> e) {
      std::sort(e.begin(), e.end());
      const auto within = std::count_if(e.begin(), e.end(), [](double x) { return x <= 0.10; });
      if (e.empty()) return std::printf("  %s: no traces\n", what), void();
      std::printf("  %s: %zu traces, median |error| %.1f %%, mean %.1f %%, worst %.1f %%, %ld within 10 %%\n", what,
                  e.size(), 100 * e[e.size() / 2], 100 * mean(e), 100 * e.back(), static_cast<long>(within));
    };
    std::printf("fitted on %zu jobs: %ld ns per host event, %ld ns per API call, %ld ns per GPU gap, exponent %.2f\n",
                fit_on.size(), static_cast<long>(p.ev), static_cast<long>(p.call), static_cast<long>(p.gap),
                static_cast<double>(p.speed) / 100);
    line("fitted jobs", errors(p, in));
    line("held out", errors(p, out));
  }
  const Params best = fit(all);
  auto summary = [&](const Params& p, std::vector<double> e) {  // e: errors(p, all)
    std::sort(e.begin(), e.end());
    const bool gaps = gauge == ProfilerSpeedGauge::kHostGapP25, launch = gauge == ProfilerSpeedGauge::kLaunchCallP50;
    return fmt::format(
        "{} ns per host event, {} ns per API call, {} ns per GPU gap, x ({} / {} ns)^{:.2f}: "
        "median |error| {:.1f} %, mean {:.1f} %, worst {:.1f} %",
        p.ev, p.call, p.gap,
        gaps     ? "host gap p25"
        : launch ? "launch call p50"
                 : "dispatch p50",
        gaps     ? kProfilerSpeedRefNs
        : launch ? kProfilerLaunchRefNs
                 : kProfilerDispatchRefNs,
        static_cast<double>(p.speed) / 100, 100 * e[e.size() / 2], 100 * mean(e), 100 * e.back());
  };
  const std::vector<double> committed_errs = errors(committed, all);
  std::printf("fitted:    %s\n", summary(best, errors(best, all)).c_str());
  std::printf("%s: %s (%s; the tables below use these)\n", costs ? "given" : "committed",
              summary(committed, committed_errs).c_str(), costs ? "--costs" : "diagnosis/what_if.h");
  if (max_unprofiled >= 0) {  // the un-profiled steps' gate
    const double worst = 100 * *std::max_element(committed_errs.begin(), committed_errs.end());
    if (worst > max_unprofiled) {
      std::printf("FAIL: an un-profiled step is %.1f %% off, above the gate's %.1f %%\n", worst, max_unprofiled);
      return 1;
    }
  }
  if (holdout) {  // each job predicted with the costs fitted on the other jobs
    std::vector<double> e;
    std::printf("held out (fitted without the job's own traces):\n");
    std::vector<std::string> names;
    for (const auto& j : jobs)
      if (std::find(names.begin(), names.end(), j.job) == names.end()) names.push_back(j.job);
    for (const auto& name : names) {
      Params p = fit([&](const Job& j) { return j.job != name; });
      std::vector<double> mine = errors(p, [&](const Job& j) { return j.job == name; });
      std::printf("  %-26s %5ld %5ld %5ld %4.2f  mean |error| %.1f %%, worst %.1f %%\n", name.c_str(), p.ev, p.call,
                  p.gap, static_cast<double>(p.speed) / 100, 100 * mean(mine),
                  100 * *std::max_element(mine.begin(), mine.end()));
      e.insert(e.end(), mine.begin(), mine.end());
    }
    std::sort(e.begin(), e.end());
    std::printf("held out, all traces: median |error| %.1f %%, mean %.1f %%, worst %.1f %%\n", 100 * e[e.size() / 2],
                100 * mean(e), 100 * e.back());
  }
  std::printf("%-36s %10s %10s %10s %8s  %s\n", "job", "traced ms", "unprof ms", "predicted", "error",
              "critical path (>= 10 %)");
  std::vector<double> all_runs_errs;  // against the median of every process's timing of the variant
  double all_runs_spread = 0;         // the largest max/min - 1 of one variant's timings over processes
  std::string all_runs_worst;
  for (const auto& j : jobs) {
    if (j.rounds.empty()) continue;
    std::vector<double> t = {j.measured};
    for (const auto& [round, ns] : j.rounds) t.push_back(ns);
    const double spread = *std::max_element(t.begin(), t.end()) / *std::min_element(t.begin(), t.end()) - 1;
    if (spread > all_runs_spread) all_runs_spread = spread, all_runs_worst = j.name;
    all_runs_errs.push_back(std::abs(j.model->replay(editsOf(committed, j)).replayed_step_ns / medianOf(t) - 1));
  }
  std::vector<double> signed_errs;  // each trace's un-profiled estimate / measured
  for (const auto& j : jobs) {
    Replay base = j.model->replay(), r = j.model->replay(editsOf(committed, j));
    signed_errs.push_back(r.replayed_step_ns / j.measured);
    const std::vector<int64_t> p25 = j.model->hostGapP25();
    const std::vector<int64_t> p50 = j.model->launchCallP50();
    std::string speed =
        p25.empty() ? "" : fmt::format("gap p25 {:.2f} us, launch p50 {:.2f} us; ", p25[0] / 1e3, p50[0] / 1e3);
    if (gauge == ProfilerSpeedGauge::kDispatchP50 && !p25.empty())
      speed.insert(speed.size() - 2, fmt::format(", dispatch p50 {:.2f} us", j.model->dispatchP50()[0] / 1e3));
    std::string path;  // the un-profiled critical path's largest parts
    for (int c = 0; c < kPathCategoryCount; ++c)
      if (r.path_ns[c] >= 0.1 * r.replayed_step_ns)
        path += fmt::format("{}{} {:.0f}%", path.empty() ? "" : ", ", pathCategoryName(static_cast<PathCategory>(c)),
                            100 * r.path_ns[c] / r.replayed_step_ns);
    std::printf("%-36s %10.2f %10.2f %10.2f %+7.1f%%  %s%s\n", j.name.c_str(), base.traced_step_ns / 1e6,
                j.measured / 1e6, r.replayed_step_ns / 1e6, 100 * (r.replayed_step_ns / j.measured - 1), speed.c_str(),
                path.c_str());
  }
  {  // how far apart two estimates of one step typically are (compare's kUnprofiledEstimateError)
    std::vector<double> apart;
    for (size_t a = 0; a < signed_errs.size(); ++a)
      for (size_t b = a + 1; b < signed_errs.size(); ++b)
        apart.push_back(std::abs(signed_errs[a] / signed_errs[b] - 1));
    if (!apart.empty())
      std::printf(
          "two traces' estimates, each against its measured step, are apart by a median of %.1f %% over all %zu "
          "pairs (compare's noise floor, analysis/compare.h: %.1f %%)\n",
          100 * medianOf(apart), apart.size(), 100 * kUnprofiledEstimateError);
  }
  if (!all_runs_errs.empty()) {
    std::sort(all_runs_errs.begin(), all_runs_errs.end());
    std::printf(
        "against the median of all processes' timings (the trace's and the re-time rounds'): median |error| "
        "%.1f %%, worst %.1f %%; one variant's timings spread up to %.1f %% over processes (%s)\n",
        100 * all_runs_errs[all_runs_errs.size() / 2], 100 * all_runs_errs.back(), 100 * all_runs_spread,
        all_runs_worst.c_str());
  }
  // The fixes as edits: the same edits the diagnosis makes (diagnosis/what_if), with the H200's
  // measured ceilings; fixes the replay cannot edit yet are listed as not modeled.
  const std::optional<Ceilings> h200 = builtinCeilings("NVIDIA H200");
  // A variant's fix (scripts/validation/whatif_jobs.py) as the diagnosis names it; the ones missing have no edit.
  static const std::map<std::string, std::string> kFixOfVariant = {{"bf16", "bf16"},
                                                                   {"workers4", "loader_workers"},
                                                                   {"workers2", "loader_workers"},
                                                                   {"log_every_100", "no_host_syncs"},
                                                                   {"where", "no_host_syncs"},
                                                                   {"pinned", "pinned_copies"},
                                                                   {"cuda_graphs", "cuda_graphs"},
                                                                   {"fused", "fused_optimizer"},
                                                                   {"sdpa", "sdpa"},
                                                                   {"no_checkpointing", "no_checkpointing"},
                                                                   {"microbatch8_no_accum", "micro_batch"},
                                                                   {"microbatch16_no_accum", "micro_batch"},
                                                                   {"cuda_graphs_model", "cuda_graphs_model"}};
  // A variant graphed by torch.compile (reduce-overhead) is the cuda_graphs fix's alternative: the
  // model alone graphed, the optimizer step eager.
  auto fixOf = [](const Job& v, std::string fix) {
    return fix == "cuda_graphs" && v.compiled_graphs ? std::string("cuda_graphs_model") : fix;
  };
  auto editFor = [&](const std::string& variant_fix, ReplayEdits& ed, const RunAnalysis* run) {
    auto it = kFixOfVariant.find(variant_fix);
    std::string basis;
    return it != kFixOfVariant.end() && fixEdit(it->second, h200 ? &*h200 : nullptr, run, ed, basis);
  };
  if (host_path) {  // the host's own path, un-profiled: every piece of GPU work free
    std::printf(
        "\nhost path (un-profiled, GPU work free) and where bf16 autocast would cast (RankAnalysis::autocast_casts)\n");
    for (const auto& j : jobs) {
      double casts = 0;
      size_t windows = 0;
      for (const auto& rk : j.run.ranks) {
        for (const auto& c : rk.autocast_casts) casts += c.casts;
        windows += rk.windows.size();
      }
      ReplayEdits h = editsOf(committed, j);
      h.kernel_scale.fill(0);
      h.memcpy_scale = h.memset_scale = 0;
      std::printf("%-40s %8.2f ms  casts per step %.1f\n", j.name.c_str(), j.model->replay(h).replayed_step_ns / 1e6,
                  windows ? casts / static_cast<double>(windows) : 0.0);
    }
  }
  std::printf("\nfixes (un-profiled steps; prediction = replayed base / replayed with the fix)\n");
  std::printf("%s\n",
              retimed ? "measured: the median over processes (the trace's and each re-time round's) of base / variant "
                        "in one process; band: every process and pass 1"
                      : "measured: pass 2 (the trace's process); band: pass 2 and pass 1");
  std::printf("%-26s %-26s %9s %9s %8s   %12s %8s %-2s %s\n", "job", "fix", "measured", "predicted", "error", "band",
              "outside", "n", "anchored: predicted, error (factor on the profiler's host cost)");
  std::vector<double> errs, band_errs, pass2_errs;  // pass2: against the trace's process alone
  std::vector<double> anchored_errs;                // the base anchored to its process's measured step
  std::vector<double> edit_errs;                    // the edited base's step against the variant trace's, both replayed
  std::string edit_note;
  for (const auto& j : jobs) {
    if (j.variant == "base" || j.variant == "rerun") continue;
    const Job* base = nullptr;
    for (const auto& b : jobs)
      if (b.job == j.job && b.variant == "base") base = &b;
    if (!base) continue;
    const ReplayEdits ed = editsOf(committed, *base);
    ReplayEdits e2 = ed;
    bool modeled = true;
    size_t from = 0;
    while (from <= j.variant.size()) {
      size_t plus = j.variant.find('+', from);
      std::string fix = j.variant.substr(from, plus == std::string::npos ? std::string::npos : plus - from);
      modeled &= editFor(fixOf(j, fix), e2, &base->run);
      if (plus == std::string::npos) break;
      from = plus + 1;
    }
    const std::vector<double> each = speedups(*base, j);
    double measured = medianOf(each);
    if (!modeled) {
      std::printf("%-26s %-26s %8.2fx %9s\n", j.job.c_str(), j.variant.c_str(), measured, "not modeled");
      continue;
    }
    const Replay base_replay = base->model->replay(ed);
    if (e2.graphed_param_ops > 0) e2.rank_op_ns = hostTimePerOperator(*base->model, base_replay);
    const Replay r = base->model->replay(e2);  // the edited base
    const double edited = r.replayed_step_ns, predicted = base_replay.replayed_step_ns / edited;
    std::string edited_path;  // --paths: where the edited base's replayed step goes
    if (paths) {
      for (int c = 0; c < kPathCategoryCount; ++c)
        if (r.path_ns[c] >= 0.005 * edited)
          edited_path += fmt::format(" {} {:.2f}", pathCategoryName(static_cast<PathCategory>(c)), r.path_ns[c] / 1e6);
      edited_path = fmt::format("    edited base {:.2f} ms:{}\n", edited / 1e6, edited_path);
    }
    double err = predicted / measured - 1;
    errs.push_back(std::abs(err));
    // The base anchored to the step its own process measured un-profiled (what a user's logs give).
    ReplayEdits anchored = ed;
    const ProfilerAnchor anchor = anchorProfilerCost(*base->model, base->measured, anchored);
    ReplayEdits anchored_fix = anchored;
    for (size_t from2 = 0; from2 <= j.variant.size();) {
      size_t plus = j.variant.find('+', from2);
      editFor(fixOf(j, j.variant.substr(from2, plus == std::string::npos ? std::string::npos : plus - from2)),
              anchored_fix, &base->run);
      if (plus == std::string::npos) break;
      from2 = plus + 1;
    }
    if (anchored_fix.graphed_param_ops > 0)
      anchored_fix.rank_op_ns = hostTimePerOperator(*base->model, base->model->replay(anchored));
    const double anchored_pred = anchor.step_ns / base->model->replay(anchored_fix).replayed_step_ns;
    anchored_errs.push_back(std::abs(anchored_pred / measured - 1));
    const std::string anchored_col =
        fmt::format("{:5.2f}x {:+6.1f}% (x{:.2f}{})", anchored_pred, 100 * (anchored_pred / measured - 1),
                    anchor.factor, anchor.reached ? "" : " not reached");
    // The edit against the variant's own trace, both replayed un-profiled: what the edit misses,
    // free of the timing's noise (the two traces come from one process each).
    const double own = j.model->replay(editsOf(committed, j)).replayed_step_ns;
    edit_errs.push_back(std::abs(edited / own - 1));
    edit_note = fmt::format("edit {:.2f} ms, variant's trace {:.2f} ms: {:+.1f}%", edited / 1e6, own / 1e6,
                            100 * (edited / own - 1));
    pass2_errs.push_back(std::abs(predicted / each.front() - 1));
    // The measurement's own spread: the speedup from the other timed pass of the same process.
    double lo = *std::min_element(each.begin(), each.end()), hi = *std::max_element(each.begin(), each.end());
    if (base->other > 0 && j.other > 0) {
      double again = base->other / j.other;
      lo = std::min(lo, again), hi = std::max(hi, again);
    }
    double band_err = predicted < lo ? predicted / lo - 1 : predicted > hi ? predicted / hi - 1 : 0;
    band_errs.push_back(std::abs(band_err));
    std::printf("%-26s %-26s %8.2fx %8.2fx %+7.1f%%   %5.2f-%5.2fx %+7.1f%% %-2zu %s  %s\n", j.job.c_str(),
                j.variant.c_str(), measured, predicted, 100 * err, lo, hi, 100 * band_err, each.size(),
                anchored_col.c_str(), paths ? edit_note.c_str() : "");
    std::fputs(edited_path.c_str(), stdout);
  }
  // The plan of each job's base trace (the whole diagnosis, built-in ceilings) against the single
  // fix that measured best; the healthy job must be promised nothing above 5 %.
  std::printf("\nplans (diagnosis of each base trace; first fix vs the single fix that measured best)\n");
  std::printf("%-26s %-44s %-22s %s\n", "job", "plan: fix cumulative-speedup -> next", "measured best", "first?");
  int plan_misses = 0, plan_tied = 0;  // tied: the measured best listed as as good as the first (kPlanTieShare)
  int plan_untested = 0;               // the first fix measured on no variant of the job: neither hit nor miss
  auto measuredOnJob = [&](const std::string& job, const std::string& fix) {
    for (const auto& j : jobs)
      if (j.job == job)
        if (auto it = kFixOfVariant.find(j.variant); it != kFixOfVariant.end() && fixOf(j, it->second) == fix)
          return true;
    return false;
  };
  for (const auto& b : jobs) {
    if (b.variant != "base") continue;
    Diagnosis d = diagnose(b.run, Thresholds::defaults());
    std::string plan;
    for (const auto& p : d.plan) {
      plan +=
          (plan.empty() ? "" : ", ") + p.fix + " " + std::to_string(p.speedup).substr(0, 4) + "x->" + p.next_bottleneck;
      for (const auto& a : p.within_accuracy) plan += " ~" + a.fix;
    }
    if (plan.empty()) plan = "(none)";
    // The best single-fix variant, by measured speedup; its fix name as the diagnosis calls it.
    const Job* best_job = nullptr;
    for (const auto& j : jobs)
      if (j.job == b.job && j.variant != "base" && j.variant != "rerun" && j.variant.find('+') == std::string::npos &&
          (!best_job || measuredSpeedup(b, j) > measuredSpeedup(b, *best_job)))
        best_job = &j;
    std::string verdict, best_name = best_job ? best_job->variant : "(nothing to fix)";
    if (!best_job) {
      bool quiet = true;
      for (const auto& fd : d.findings) quiet &= !fd.what_if.available || fd.what_if.speedup <= 1.05;
      // As the lab scores a healthy job: no fix promised above 1.05x, in a finding or the plan.
      quiet &= d.plan.empty() || d.plan.front().speedup <= 1.05;
      verdict = quiet ? "yes (nothing above 1.05x)" : "NO: a fix promised above 1.05x";
      if (!quiet) ++plan_misses;
    } else {
      ReplayEdits probe;
      bool modeled = editFor(best_job->variant, probe, &b.run);
      std::string want;
      if (auto it = kFixOfVariant.find(best_job->variant); it != kFixOfVariant.end()) want = it->second;
      if (!modeled)
        verdict = "not modeled";
      else if (!d.plan.empty() && d.plan.front().fix == want)
        verdict = "yes";
      else if (!d.plan.empty() && !measuredOnJob(b.job, d.plan.front().fix))
        verdict = "untested: no variant applies " + d.plan.front().fix, ++plan_untested;
      else {
        verdict = "NO", ++plan_misses;
        if (!d.plan.empty())
          for (const auto& a : d.plan.front().within_accuracy)
            if (a.fix == want) verdict = "NO (listed as as good)", ++plan_tied;
      }
      best_name += " " + std::to_string(measuredSpeedup(b, *best_job)).substr(0, 4) + "x";
    }
    std::printf("%-26s %-44s %-22s %s\n", b.job.c_str(), plan.c_str(), best_name.c_str(), verdict.c_str());
  }
  std::printf(
      "plan misses: %d (the measured best listed beside the first, within the replay's accuracy: %d); "
      "untested: %d (the first fix measured on no variant of the job)\n",
      plan_misses, plan_tied, plan_untested);
  if (!errs.empty()) {
    std::sort(errs.begin(), errs.end());
    double med = 100 * errs[errs.size() / 2], worst = 100 * errs.back();
    std::printf("modeled fixes: %zu, median |error| %.1f %%, worst %.1f %%\n", errs.size(), med, worst);
    std::sort(pass2_errs.begin(), pass2_errs.end());
    if (retimed)
      std::printf("against the trace's process alone (pass 2): median |error| %.1f %%, worst %.1f %%\n",
                  100 * pass2_errs[pass2_errs.size() / 2], 100 * pass2_errs.back());
    std::sort(anchored_errs.begin(), anchored_errs.end());
    std::printf(
        "with the base anchored to the step its process measured (analyze --measured-step-ms): median |error| %.1f %%, "
        "worst %.1f %%\n",
        100 * anchored_errs[anchored_errs.size() / 2], 100 * anchored_errs.back());
    std::sort(edit_errs.begin(), edit_errs.end());
    std::printf(
        "each edited base against the variant's own trace, both replayed un-profiled: median |error| %.1f %%, "
        "worst %.1f %%\n",
        100 * edit_errs[edit_errs.size() / 2], 100 * edit_errs.back());
    std::sort(band_errs.begin(), band_errs.end());
    const double outside = 100 * band_errs.back();
    std::printf("outside the measured band (every timed process and pass 1): median %.1f %%, worst %.1f %%\n",
                100 * band_errs[band_errs.size() / 2], outside);
    if ((max_median >= 0 && med > max_median) || (max_worst >= 0 && worst > max_worst) ||
        (max_outside >= 0 && outside > max_outside)) {
      std::printf("FAIL: above the gate (median %.1f %%, worst %.1f %%, outside the band %.1f %%)\n", max_median,
                  max_worst, max_outside);
      return 1;
    }
  }
  return 0;
}
