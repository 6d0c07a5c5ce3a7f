#include "diagnosis/io_advice.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/thousands.h"

namespace gpudoctor {

namespace {

std::string rate(double r) {
  if (r >= 100) return groupThousands(r);
  return fmt::format("{:.1f}", r);
}

std::string workersText(int n) { return std::to_string(n) + (n == 1 ? " worker" : " workers"); }

// "1 worker reaches", "3 workers reach".
std::string workersReach(int n) { return workersText(n) + (n == 1 ? " reaches" : " reach"); }

}  // namespace

IoAdvice adviseIo(const std::vector<IoPath>& paths, const IoTarget& target) {
  IoAdvice out;
  out.target = target;
  // Inflating a sample costs CPU on the worker that loads it, on top of the read.
  double dec_s = target.decompress_bytes_per_s > 0
                     ? target.sample_bytes * target.compression_ratio / target.decompress_bytes_per_s
                     : 0;
  for (const auto& p : paths) {
    IoPathAdvice a;
    a.path = p;
    if (p.per_worker_samples_per_s <= 0 || target.samples_per_s <= 0) {
      a.verdict = p.name + ": not measured";
      out.paths.push_back(a);
      continue;
    }
    double per_sample_s = 1.0 / p.per_worker_samples_per_s + dec_s;
    a.per_worker_samples_per_s = 1.0 / per_sample_s;
    double cap = p.best_samples_per_s;
    // Decompression is CPU work: at most one worker per core makes progress on it.
    if (dec_s > 0) cap = std::min(cap, target.cpus * a.per_worker_samples_per_s);
    a.workers = static_cast<int>(std::ceil(target.samples_per_s / a.per_worker_samples_per_s - 1e-9));
    a.headroom = cap / target.samples_per_s;
    a.sustainable = cap >= target.samples_per_s;
    double scaling = p.best_samples_per_s / (p.per_worker_samples_per_s * std::max(1, p.best_threads));
    if (!a.sustainable && p.best_threads >= p.max_threads_measured && scaling >= 0.7 && dec_s == 0)
      a.beyond_measured = true;
    std::string head = fmt::format("{}: 1 worker delivers {} samples/s", p.name, rate(a.per_worker_samples_per_s));
    if (a.sustainable)
      a.verdict = fmt::format("{}; {} {} samples/s (best measured {} with {} thread{}, {:.1f}x the target)", head,
                              workersReach(a.workers), rate(target.samples_per_s), rate(cap), p.best_threads,
                              p.best_threads == 1 ? "" : "s", a.headroom);
    else if (a.beyond_measured)
      a.verdict = fmt::format(
          "{}; needs {}, more than the {} threads measured (best {} samples/s, still scaling): "
          "may reach it, measure with more threads",
          head, workersText(a.workers), p.max_threads_measured, rate(cap));
    else
      a.verdict = fmt::format("{}; cannot sustain {} samples/s: it saturates at {} samples/s ({:.0f} % of the target)",
                              head, rate(target.samples_per_s), rate(cap), 100 * a.headroom);
    if (a.sustainable && a.workers > target.cpus)
      a.verdict += fmt::format("; note: more workers than the {} cores", target.cpus);
    out.paths.push_back(a);
  }
  if (out.paths.empty()) return out;
  const IoPathAdvice& cur = out.paths.front();
  // Fixes: the other paths that reach the target, fewest workers first, then more headroom.
  std::vector<const IoPathAdvice*> alts;
  for (size_t i = 1; i < out.paths.size(); ++i)
    if (out.paths[i].per_worker_samples_per_s > 0 && !out.paths[i].path.fix.empty()) alts.push_back(&out.paths[i]);
  std::stable_sort(alts.begin(), alts.end(), [](const IoPathAdvice* a, const IoPathAdvice* b) {
    if (a->sustainable != b->sustainable) return a->sustainable;
    if (a->sustainable && a->workers != b->workers) return a->workers < b->workers;
    return a->headroom > b->headroom;
  });
  if (cur.sustainable)
    out.fixes.push_back(fmt::format("{}: num_workers={} ({} samples/s per worker measured) is enough on {}",
                                    cur.workers > 1 ? "more workers" : "no change needed", cur.workers,
                                    rate(cur.per_worker_samples_per_s), cur.path.name));
  for (const auto* a : alts) {
    if (!a->sustainable && !a->beyond_measured) {
      out.fixes.push_back(fmt::format("{}: not enough either ({} samples/s at best, {:.0f} % of the target)",
                                      a->path.fix, rate(a->headroom * target.samples_per_s), 100 * a->headroom));
      continue;
    }
    if (cur.sustainable && a->workers >= cur.workers) {
      // Nothing saved in workers: what it buys is headroom for a faster model or more GPUs.
      out.fixes.push_back(fmt::format("{}: {:.1f}x headroom instead of {:.1f}x ({} samples/s per worker)", a->path.fix,
                                      a->headroom, cur.headroom, rate(a->per_worker_samples_per_s)));
      continue;
    }
    std::string vs =
        cur.sustainable ? fmt::format("instead of {}", cur.workers) : std::string("where today's path cannot reach it");
    out.fixes.push_back(fmt::format("{}: {} the target {} ({:.1f}x headroom, {} samples/s per worker)", a->path.fix,
                                    workersReach(a->workers), vs, a->headroom, rate(a->per_worker_samples_per_s)));
  }
  if (dec_s > 0) {
    double share = dec_s / (1.0 / cur.per_worker_samples_per_s);
    if (share >= 0.3)
      out.fixes.push_back(
          fmt::format("store samples uncompressed (or with a faster codec): inflating takes {:.0f} % of "
                      "each worker's time ({:.0f} MB/s per core)",
                      100 * share, target.decompress_bytes_per_s / 1e6));
  }
  double mbps = target.samples_per_s * target.sample_bytes / 1e6;
  if (cur.sustainable) {
    out.summary = fmt::format("Target {} samples/s ({:.1f} MB/s): {} {} it on {}", rate(target.samples_per_s), mbps,
                              workersText(cur.workers), cur.workers == 1 ? "sustains" : "sustain", cur.path.name);
  } else {
    out.summary = fmt::format("Target {} samples/s ({:.1f} MB/s): {} cannot sustain it", rate(target.samples_per_s),
                              mbps, cur.path.name);
    const IoPathAdvice* best = alts.empty() ? nullptr : alts.front();
    if (best && (best->sustainable || best->beyond_measured))
      out.summary += fmt::format("; best fix: {} ({}, {:.1f}x headroom)", best->path.fix, workersText(best->workers),
                                 best->headroom);
    else
      out.summary += "; no measured option reaches it: faster storage, or more nodes reading in parallel";
  }
  return out;
}

}  // namespace gpudoctor
