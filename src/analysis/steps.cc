#include "analysis/steps.h"

#include <algorithm>
#include <cstddef>

#include "analysis/trace_index.h"
#include "common/exact_time.h"

namespace gpudoctor {

Result<StepSelection> StepSelection::parse(const std::string& text) {
  StepSelection sel;
  if (text.empty() || text == "all") return sel;
  size_t i = 0;
  auto bad = [&] { return Error{"--steps: cannot read \"" + text + "\" (expected e.g. 3 or 2-4 or 2,5,7-9)"}; };
  while (i <= text.size()) {
    size_t j = text.find(',', i);
    if (j == std::string::npos) j = text.size();
    std::string part = text.substr(i, j - i);
    size_t dash = part.find('-', 1);
    auto a = parseInt64(part.substr(0, dash));
    if (!a || *a < 0 || *a > 1'000'000'000'000LL) return bad();
    int64_t b = *a;
    if (dash != std::string::npos) {
      auto bb = parseInt64(part.substr(dash + 1));
      if (!bb || *bb < *a || *bb - *a > 1000000 || *bb > 1'000'000'000'000LL) return bad();
      b = *bb;
    }
    for (int64_t n = *a; n <= b; ++n) sel.numbers.push_back(n);
    i = j + 1;
  }
  std::sort(sel.numbers.begin(), sel.numbers.end());
  return sel;
}

bool StepSelection::keeps(int64_t n) const {
  return numbers.empty() || std::binary_search(numbers.begin(), numbers.end(), n);
}

Result<std::vector<StepWindow>> findSteps(const RankTrace& t, const TraceIndex& idx, const StepSelection& sel,
                                          StepCoverage* cov) {
  std::vector<StepWindow> all;
  for (uint32_t i : idx.step_annotations) {
    const Event& e = t.events[i];
    StepWindow w;
    w.number = t.stepNumber(i);  // set by the reader
    w.annotated = true;
    w.cpu_begin_ns = w.begin_ns = e.start_ns;
    w.cpu_end_ns = e.end_ns();
    all.push_back(w);
  }
  std::sort(all.begin(), all.end(), [](const StepWindow& a, const StepWindow& b) { return a.begin_ns < b.begin_ns; });
  StepCoverage local;
  if (!cov) cov = &local;
  *cov = {};
  if (all.empty()) {
    if (!idx.has_gpu_work()) return Error{t.path + ": no GPU activity in this trace (no kernels, memcpy or memset)"};
    // From the first start to the last end of GPU work (the busy set may be empty when every
    // piece of work has zero duration).
    StepWindow w;
    w.begin_ns = INT64_MAX;
    w.end_ns = INT64_MIN;
    for (uint32_t g : idx.gpu_work) {
      w.begin_ns = std::min(w.begin_ns, t.events[g].start_ns);
      w.end_ns = std::max(w.end_ns, t.events[g].end_ns());
    }
    w.cpu_begin_ns = w.begin_ns;
    w.cpu_end_ns = w.end_ns;
    all.push_back(w);
  } else {
    // A first or last step that neither launches nor runs GPU work in its host range, among steps
    // that do, is no training step (the step the last prof.step() opens): left out.
    auto empty = [&](size_t k) {
      int64_t b = all[k].cpu_begin_ns, e = k + 1 < all.size() ? all[k + 1].begin_ns : all[k].cpu_end_ns;
      auto l = idx.firstStartingAt(idx.launches, b);
      if (l != idx.launches.end() && t.events[*l].start_ns < e) return false;
      auto g = idx.firstStartingAt(idx.gpu_work, b);
      return g == idx.gpu_work.end() || t.events[*g].start_ns >= e;
    };
    size_t lo = 0, hi = all.size();
    while (lo < hi && empty(lo)) ++lo;
    while (hi > lo && empty(hi - 1)) --hi;
    if (lo < hi && (lo > 0 || hi < all.size())) {
      for (size_t k = 0; k < all.size(); ++k)
        if (k < lo || k >= hi) cov->dropped.push_back({all[k].number, all[k].cpu_end_ns - all[k].cpu_begin_ns});
      all = std::vector<StepWindow>(all.begin() + static_cast<std::ptrdiff_t>(lo),
                                    all.begin() + static_cast<std::ptrdiff_t>(hi));
    }
    // A run breaks where the next step starts more than a step's length after this one's host
    // range ended: the recorder was detached in between (record --sample, a signal), so the gap
    // is no part of either step. The steps of a run tile the timeline up to the next one's start.
    std::vector<size_t> run_ends;  // steps that end a run: each before a gap, and the last
    for (size_t k = 0; k + 1 < all.size(); ++k) {
      const int64_t host = all[k].cpu_end_ns - all[k].cpu_begin_ns;
      if (host > 0 && all[k + 1].begin_ns - all[k].cpu_end_ns > host)
        run_ends.push_back(k);
      else
        all[k].end_ns = all[k + 1].begin_ns;
    }
    run_ends.push_back(all.size() - 1);
    StepWindow& last = all.back();
    // A step annotation can outlive the recording (closed long after the profiler stopped): what
    // nothing recorded is no part of the step.
    int64_t recorded_end = t.record_window_end_ns;
    for (const Event& e : t.events)
      if (!e.hasRole(kRoleStep)) recorded_end = std::max(recorded_end, e.end_ns());
    constexpr int64_t kToleranceNs = 2000;
    if (recorded_end != INT64_MIN && recorded_end > last.cpu_begin_ns &&
        last.cpu_end_ns - recorded_end > kToleranceNs) {
      last.clipped_ns = last.cpu_end_ns - recorded_end;
      last.cpu_end_ns = recorded_end;
    }
    // A step that ends a run also owns the GPU work it launched, which may finish after its host
    // range: one pass over the GPU work for all of them (their host ranges are disjoint, in order).
    std::vector<int64_t> owned(run_ends.size());
    for (size_t i = 0; i < run_ends.size(); ++i) owned[i] = all[run_ends[i]].cpu_end_ns;
    for (uint32_t g : idx.gpu_work) {
      const Event& e = t.events[g];
      uint32_t l = e.correlation < 0 ? IdMap::kNone : idx.launch_of.find(e.correlation);
      if (l == IdMap::kNone) continue;
      const int64_t launched = t.events[l].start_ns;
      auto it = std::upper_bound(run_ends.begin(), run_ends.end(), launched,
                                 [&](int64_t v, size_t k) { return v < all[k].cpu_begin_ns; });
      if (it == run_ends.begin()) continue;
      const size_t i = static_cast<size_t>(std::prev(it) - run_ends.begin());
      if (launched < all[run_ends[i]].cpu_end_ns) owned[i] = std::max(owned[i], e.end_ns());
    }
    for (size_t i = 0; i + 1 < run_ends.size(); ++i)
      all[run_ends[i]].end_ns = std::min(owned[i], all[run_ends[i] + 1].begin_ns);
    last.end_ns = owned.back();
    // GPU work outside every window (before the first, in a gap, after the last) is in no figure.
    for (uint32_t g : idx.gpu_work) {
      const Event& e = t.events[g];
      auto after = std::upper_bound(all.begin(), all.end(), e.start_ns,
                                    [](int64_t v, const StepWindow& w) { return v < w.begin_ns; });
      if (after != all.begin() && e.start_ns < std::prev(after)->end_ns) continue;
      cov->gpu_outside_ns += e.dur_ns;
      ++cov->gpu_outside_ops;
      if (after == all.begin()) cov->gpu_before_ns += e.dur_ns;
    }
  }
  std::vector<StepWindow> kept;
  for (const auto& w : all)
    if (!w.annotated || sel.keeps(w.number)) kept.push_back(w);
  if (kept.empty()) {
    std::string have;
    for (const auto& w : all) have += (have.empty() ? "" : ",") + std::to_string(w.number);
    return Error{t.path + ": --steps keeps none of the steps in this trace (it has ProfilerStep# " + have + ")"};
  }
  return kept;
}

}  // namespace gpudoctor
