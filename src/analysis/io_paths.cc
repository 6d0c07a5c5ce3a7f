#include "analysis/io_paths.h"

#include <algorithm>

namespace gpudoctor {

double consumedSamplesPerSecond(const RunAnalysis& run, int64_t batch) {
  double rate = 0;
  for (const auto& r : run.ranks) {
    double busy_ns = static_cast<double>(r.total.wall_ns - r.total.idle_in_loader_ns);
    if (busy_ns <= 0 || r.steps.empty()) continue;
    rate += static_cast<double>(batch) * r.steps.size() / (busy_ns / 1e9);
  }
  return rate;
}

namespace {

const ReadFigure* pick(const StorageBenchResult& r, const std::string& pattern, const std::string& cache, int threads) {
  for (const auto& f : r.figures)
    if (f.pattern == pattern && f.cache == cache && f.threads == threads) return &f;
  return nullptr;
}

IoReadPath pathFrom(const StorageBenchResult& r, const std::string& pattern, const std::string& cache, std::string name,
                    std::string fix) {
  IoReadPath p;
  p.name = std::move(name);
  p.fix = std::move(fix);
  int lowest = *std::min_element(r.options.threads.begin(), r.options.threads.end());
  if (const ReadFigure* one = pick(r, pattern, cache, lowest))
    p.per_worker_samples_per_s = one->opsPerSecond() / lowest;
  for (const auto& f : r.figures)
    if (f.pattern == pattern && f.cache == cache) {
      p.max_threads_measured = std::max(p.max_threads_measured, f.threads);
      if (f.opsPerSecond() > p.best_samples_per_s) {
        p.best_samples_per_s = f.opsPerSecond();
        p.best_threads = f.threads;
      }
    }
  return p;
}

}  // namespace

std::vector<IoReadPath> ioReadPaths(const StorageBenchResult& res, const std::string& current,
                                    const std::string& cache) {
  std::vector<IoReadPath> paths;
  auto add = [&](const std::string& pattern, const std::string& c, const std::string& name, const std::string& fix) {
    if (pick(res, pattern, c, res.options.threads.front())) paths.push_back(pathFrom(res, pattern, c, name, fix));
  };
  std::string cur_pattern = current == "shards" ? "shards" : "small files";
  add(cur_pattern, cache, cur_pattern + ", " + cache + " cache (today)", "");
  const char* cache_fix = "cache the dataset on local NVMe or in RAM (page cache)";
  for (const char* pattern : {"small files", "shards"})
    for (const char* c : {"cold", "warm"}) {
      if (pattern == cur_pattern && c == cache) continue;
      std::string fix;
      if (std::string(pattern) == "shards" && cur_pattern != "shards")
        fix = std::string("pack into shards (gpudoctor pack)") +
              (std::string(c) == "warm" ? " and " + std::string(cache_fix) : "");
      else if (std::string(c) == "warm" && cache == "cold")
        fix = cache_fix;
      if (fix.empty()) continue;  // a step back from today's setup is no fix
      add(pattern, c, std::string(pattern) + ", " + c + " cache", fix);
    }
  return paths;
}

}  // namespace gpudoctor
