#include "pipeline/fleet_stream.h"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <mutex>
#include <thread>

#include "analysis/digest.h"
#include "sources/summary/summary_file.h"
#include "sources/trace_set.h"

namespace gpudoctor {

bool isSummaryFile(const std::string& path) {
  auto head = readTraceHead(path, 64);
  return head.ok() && isSummaryHead(head.value());
}

std::vector<RankDigest> digestsOf(const RunAnalysis& run) {
  std::vector<RankDigest> out;
  int world = -1;
  for (const auto& r : run.ranks) {
    out.push_back(digestRank(r));
    world = std::max(world, r.trace->world_size);
  }
  for (const auto& l : run.left_out) out.push_back(digestLeftOut(l, world));
  return out;
}

Result<StreamResult> digestFiles(const std::vector<std::string>& files, const StreamOptions& opt,
                                 const std::vector<size_t>* file_indices) {
  const size_t total = file_indices ? file_indices->size() : files.size();
  std::vector<std::vector<RankDigest>> per_file(total);
  std::vector<std::optional<Error>> failed(total);
  std::vector<uint64_t> bytes(total, 0);
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  size_t done = 0;
  uint64_t done_bytes = 0;
  AnalysisOptions aopt = opt.analysis;
  aopt.threads = 1;
  auto one = [&](size_t k) -> Status {
    const size_t i = file_indices ? (*file_indices)[k] : k;
    const std::string& path = files[i];
    if (isSummaryFile(path)) {
      auto s = readSummaryFile(path);
      if (!s.ok()) return s.error();
      per_file[k] = std::move(s.value());
      std::error_code ec;
      bytes[k] = std::filesystem::file_size(path, ec);
      return {};
    }
    auto t = readTrace(path);
    if (!t.ok()) return t.error();
    std::vector<RankTrace> one_trace;
    one_trace.push_back(std::move(t.value()));
    if (one_trace[0].rank < 0) one_trace[0].rank = static_cast<int>(i);  // file order, as readTraceSet does
    bytes[k] = one_trace[0].stats.input_bytes;
    auto run = analyzeRun(one_trace, aopt);
    if (!run.ok()) {
      // A rank without GPU activity is left out, as in the in-memory mode.
      if (run.error().message.find("no GPU activity") != std::string::npos) {
        per_file[k].push_back(digestLeftOut({path, one_trace[0].rank, "no GPU activity (no kernels, memcpy or memset)"},
                                            one_trace[0].world_size));
        return {};
      }
      return run.error();
    }
    per_file[k] = digestsOf(run.value());
    return {};
  };
  auto worker = [&] {
    for (size_t k; !stop && (k = next.fetch_add(1)) < total;) {
      Status s;
      try {
        s = one(k);
      } catch (const std::bad_alloc&) {
        s = Error{files[file_indices ? (*file_indices)[k] : k] + ": out of memory while analyzing"};
      }
      std::lock_guard<std::mutex> lock(mu);
      if (!s.ok()) {
        failed[k] = Error{s.message()};
        stop = true;
      }
      ++done;
      done_bytes += bytes[k];
      if (opt.progress) opt.progress({done, total, done_bytes});
    }
  };
  unsigned n = opt.threads ? opt.threads : std::max(1u, std::thread::hardware_concurrency());
  n = static_cast<unsigned>(std::max<size_t>(1, std::min<size_t>(n, total)));
  std::vector<std::thread> pool;
  for (unsigned k = 1; k < n; ++k) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  for (auto& f : failed)
    if (f) return *f;
  StreamResult r;
  for (size_t k = 0; k < total; ++k) {
    r.bytes += bytes[k];
    for (auto& d : per_file[k]) r.digests.push_back(std::move(d));
  }
  return r;
}

int64_t peakRssBytes() {
  struct rusage ru {};
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return static_cast<int64_t>(ru.ru_maxrss) * 1024;  // Linux: kilobytes
}

}  // namespace gpudoctor
