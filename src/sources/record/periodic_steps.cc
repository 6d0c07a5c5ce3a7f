#include "sources/record/periodic_steps.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace gpudoctor {

namespace {
constexpr double kMinMatch = 0.95;    // self-match at the period
constexpr double kRegularGaps = 0.8;  // a candidate name's gaps that must equal its commonest gap
constexpr size_t kMinSteps = 2;       // periods needed to call it a loop
constexpr size_t kWindow = 1u << 15;  // most launches the period is sought in
constexpr size_t kMinWindow = 8;      // fewest
constexpr size_t kMinPeriods = 3;     // whole periods a window must hold
}  // namespace

PeriodicSteps findPeriodicSteps(const std::vector<LaunchMark>& launches) {
  PeriodicSteps out;
  const size_t n = launches.size();
  if (n < 2 * kMinSteps) {
    out.why_none = "too few launches (" + std::to_string(n) + ") to find a repeating step";
    return out;
  }
  // The steady state: the period is sought in the last W launches, W = all of them (at most
  // kWindow), then halved while none is found (a JAX job's first thousands of launches are
  // autotuning; its steps are a few graph launches each). In a window, the period is the smallest
  // shift at which it matches itself at kMinMatch of its positions with kMinPeriods in it; a shift
  // is given up once its mismatches exceed what that allows.
  size_t from = n;
  for (size_t w = std::min(n, kWindow); w >= kMinWindow && out.period == 0; w /= 2) {
    from = n - w;
    for (size_t g = 1; g * kMinPeriods <= w; ++g) {
      const size_t positions = w - g;
      const size_t allowed = static_cast<size_t>((1 - kMinMatch) * static_cast<double>(positions));
      size_t miss = 0;
      for (size_t i = from; i + g < n && miss <= allowed; ++i) miss += launches[i].key != launches[i + g].key;
      if (miss <= allowed) {
        out.period = g;
        out.match = 1 - static_cast<double>(miss) / static_cast<double>(positions);
        break;
      }
    }
  }
  if (out.period == 0) {
    out.why_none = "the " + std::to_string(n) + " launches do not repeat with a fixed period";
    return out;
  }
  const size_t p = out.period;
  // Phase: the position whose launch follows the longest host gap, on average over the steady state.
  std::vector<double> gap_sum(p, 0);
  std::vector<size_t> gap_n(p, 0);
  for (size_t i = std::max<size_t>(from, 1); i < n; ++i) {  // over the window the period was found in
    gap_sum[i % p] += static_cast<double>(launches[i].start_ns - launches[i - 1].end_ns);
    ++gap_n[i % p];
  }
  size_t phase = 0;
  double best = -1;
  for (size_t j = 0; j < p; ++j) {
    double mean = gap_n[j] != 0 ? gap_sum[j] / static_cast<double>(gap_n[j]) : -1;
    if (mean > best) {
      best = mean;
      phase = j;
    }
  }
  // From a boundary in the steady state, back while each earlier period repeats the next one: the
  // warm-up before is in no step, nor the partial period after the last boundary.
  size_t a = from - from % p + phase;
  if (a < from) a += p;
  if (a + p > n && a >= p) a -= p;
  auto repeats = [&](size_t x) {
    if (x + 2 * p > n) return false;
    size_t same = 0;
    for (size_t j = 0; j < p; ++j) same += launches[x + j].key == launches[x + p + j].key;
    return static_cast<double>(same) >= kMinMatch * static_cast<double>(p);
  };
  while (a >= p && repeats(a - p)) a -= p;
  for (size_t i = a; i < n; i += p) out.boundaries.push_back(launches[i].start_ns);
  if (out.boundaries.size() < kMinSteps + 1) {
    out.why_none =
        "a period of " + std::to_string(p) + " launches, but fewer than " + std::to_string(kMinSteps) + " whole steps";
    out.period = 0;
    out.boundaries.clear();
  }
  return out;
}

}  // namespace gpudoctor
