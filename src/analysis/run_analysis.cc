#include "analysis/run_analysis.h"

#include <atomic>
#include <optional>
#include <thread>

namespace gpudoctor {

namespace {
Status analyzeRank(RankAnalysis& ra, const AnalysisOptions& opt) {
  ra.index = buildIndex(*ra.trace);
  if (!ra.index.has_gpu_work())
    return Error{ra.trace->path + ": no GPU activity in this trace (no kernels, memcpy or memset); "
                                  "was the profiler run with ProfilerActivity.CUDA?"};
  auto w = findSteps(*ra.trace, ra.index, opt.steps);
  if (!w.ok()) return w.error();
  ra.windows = std::move(w.value());
  std::vector<int64_t> lat;
  for (const auto& win : ra.windows) {
    ra.steps.push_back(measureStep(ra.index, win, &lat));
    accumulate(ra.total, ra.steps.back());
  }
  ra.total.window.begin_ns = ra.windows.front().begin_ns;
  ra.total.window.end_ns = ra.windows.back().end_ns;
  ra.total.launch_latency = DurationStats::of(lat);
  std::vector<RankWindows> me{{&ra.index, &ra.windows}};
  ra.kernels = summarizeKernels(me, opt.top_n);
  ra.collectives = summarizeCollectives(me);
  ra.job = profileRank(ra);
  return {};
}
}  // namespace

Result<RunAnalysis> analyzeRun(const std::vector<RankTrace>& traces, const AnalysisOptions& opt) {
  RunAnalysis run;
  run.ranks.resize(traces.size());
  for (size_t i = 0; i < traces.size(); ++i) run.ranks[i].trace = &traces[i];
  std::vector<Status> status(traces.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < traces.size();) {
      try {
        status[i] = analyzeRank(run.ranks[i], opt);
      } catch (const std::bad_alloc&) {
        status[i] = Error{traces[i].path + ": out of memory while analyzing"};
      }
    }
  };
  unsigned n = opt.threads ? opt.threads : std::max(1u, std::thread::hardware_concurrency());
  n = static_cast<unsigned>(std::min<size_t>(n, traces.size()));
  std::vector<std::thread> pool;
  for (unsigned k = 1; k < n; ++k) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  for (const auto& s : status)
    if (!s.ok()) return Error{s.message()};
  std::vector<RankWindows> all;
  std::vector<int> ids;
  for (const auto& r : run.ranks) {
    all.push_back({&r.index, &r.windows});
    ids.push_back(r.trace->rank);
  }
  run.kernels = summarizeKernels(all, opt.top_n);
  run.collectives = summarizeCollectives(all);
  run.straggler = findStraggler(all, ids, opt.straggler_share_min, opt.straggler_wait_min);
  std::vector<JobProfile> jobs;
  for (const auto& r : run.ranks) jobs.push_back(r.job);
  run.job = mergeJobProfiles(jobs, ids);
  return run;
}

}  // namespace gpudoctor
