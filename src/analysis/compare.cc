#include "analysis/compare.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "analysis/digest.h"
#include "analysis/kernel_class.h"
#include "analysis/replay/replay.h"

namespace gpudoctor {

namespace {

constexpr size_t kCategoryCount = kPathCategoryCount;

std::string categoryName(size_t k) { return std::string(pathCategoryName(static_cast<PathCategory>(k))); }

std::array<int64_t, kCategoryCount> categoriesOf(const StepFigures& s) {
  return rankingCategories(s.compute, s.comm_exposed, s.copies, s.idle_host, s.idle_sync, s.idle_dependency,
                           s.idle_other, s.idle_host_loader, s.idle_sync_loader);
}

// The median of a rank's steps' wall times (the mean of the middle two for an even count).
double medianOf(const RankSummary& r) {
  std::vector<int64_t> w;
  for (const auto& s : r.steps) w.push_back(s.wall);
  if (w.empty()) return 0;
  std::sort(w.begin(), w.end());
  const size_t n = w.size();
  return n % 2 ? static_cast<double>(w[n / 2]) : (static_cast<double>(w[n / 2 - 1]) + static_cast<double>(w[n / 2])) / 2;
}

// The step-to-step spread of a rank: (max - min) / mean of its steps' wall times.
double spreadOf(const RankSummary& r) {
  int64_t lo = INT64_MAX, hi = INT64_MIN, sum = 0;
  for (const auto& s : r.steps) lo = std::min(lo, s.wall), hi = std::max(hi, s.wall), sum += s.wall;
  const double mean = static_cast<double>(sum) / static_cast<double>(r.steps.size());
  return mean > 0 ? static_cast<double>(hi - lo) / mean : 0;
}

// A kernel name without its template arguments, parameters and numbers: the same kernel of
// another build or shape matches ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64...").
std::string stem(std::string_view n) {
  if (n.substr(0, 5) == "void ") n.remove_prefix(5);
  for (std::string_view anon = "(anonymous namespace)::"; n.substr(0, anon.size()) == anon;) n.remove_prefix(anon.size());
  size_t cut = n.find_first_of("<(");
  if (cut != std::string_view::npos) n = n.substr(0, cut);
  std::string o;
  for (char c : n) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      if (o.empty() || o.back() != '#') o += '#';
    } else {
      o += c;
    }
  }
  return o;
}

std::vector<Delta> deltas(const std::vector<TimeTotal>& b, const std::vector<TimeTotal>& n, double b_steps,
                          double n_steps, bool by_stem, std::vector<std::string>* only) {
  std::map<std::string, std::pair<double, double>> m;
  std::map<std::string, int> seen;  // 1 base, 2 new
  auto key = [&](const TimeTotal& t) { return by_stem ? t.cls + ": " + stem(t.name) : t.name; };
  for (const auto& t : b) m[key(t)].first += static_cast<double>(t.total_ns) / b_steps, seen[key(t)] |= 1;
  for (const auto& t : n) m[key(t)].second += static_cast<double>(t.total_ns) / n_steps, seen[key(t)] |= 2;
  // Kernels in one side's top list only, launched by the same operator with the same input shapes
  // on both sides (a library picked another kernel for the same GEMM): paired by that operator.
  std::map<std::string, std::string> op_of;  // stem key -> operator
  if (by_stem) {
    for (const auto& t : b)
      if (!t.op.empty()) op_of.try_emplace(key(t), t.op);
    for (const auto& t : n)
      if (!t.op.empty()) op_of.try_emplace(key(t), t.op);
  }
  std::map<std::string, std::pair<std::vector<std::string>, std::vector<std::string>>> by_op;  // op -> (base, new) keys
  for (const auto& [k, s] : seen) {
    auto o = op_of.find(k);
    if (s == 3 || o == op_of.end()) continue;
    (s == 1 ? by_op[o->second].first : by_op[o->second].second).push_back(k);
  }
  for (auto& [op, sides] : by_op) {
    if (sides.first.empty() || sides.second.empty()) continue;
    std::string name = "by operator " + op + ": ";
    std::pair<double, double> sum{0, 0};
    for (size_t i = 0; i < sides.first.size(); ++i) name += (i ? " + " : "") + sides.first[i], sum.first += m[sides.first[i]].first;
    name += " -> ";
    for (size_t i = 0; i < sides.second.size(); ++i) name += (i ? " + " : "") + sides.second[i], sum.second += m[sides.second[i]].second;
    for (const auto& k : sides.first) m.erase(k);
    for (const auto& k : sides.second) m.erase(k);
    m[name] = sum;
    seen[name] = 3;
  }
  std::vector<Delta> out;
  for (const auto& [k, v] : m) {
    if (only && seen[k] != 3) {
      only->push_back(fmt::format("{}: {} ({:.3f} ms/step)", seen[k] == 1 ? "gone from the top kernels" : "new in the top kernels",
                                  k, (seen[k] == 1 ? v.first : v.second) / 1e6));
      continue;
    }
    out.push_back({k, v.first, v.second});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Delta& a, const Delta& c) { return std::abs(a.delta()) > std::abs(c.delta()); });
  return out;
}

std::vector<Delta> grouped(const std::vector<Delta>& cats) {
  std::vector<Delta> g;
  for (const auto& c : cats) {
    std::string name(categoryGroup(c.name));
    auto it = std::find_if(g.begin(), g.end(), [&](const Delta& x) { return x.name == name; });
    if (it == g.end()) g.push_back({name, c.base, c.next});
    else it->base += c.base, it->next += c.next;
  }
  std::stable_sort(g.begin(), g.end(), [](const Delta& a, const Delta& b) { return std::abs(a.delta()) > std::abs(b.delta()); });
  return g;
}

}  // namespace

RunSummary summarizeRun(const RunAnalysis& run, double unprofiled_step_ns,
                        std::vector<std::pair<std::string, double>> unprofiled_path) {
  RunSummary s;
  for (const auto& r : run.ranks) {
    RankSummary rs;
    rs.rank = r.trace->rank;
    rs.path = r.trace->path;
    for (const auto& b : r.steps) rs.steps.push_back(stepFigures(b));
    s.source += (s.source.empty() ? "" : ", ") + r.trace->path;
    s.ranks.push_back(std::move(rs));
  }
  for (const auto& c : run.kernels.classes)
    s.classes.push_back({std::string(kernelClassName(c.cls)), "", "", c.dur.count, c.dur.total_ns});
  for (const auto& k : run.kernels.top)
    s.kernels.push_back({k.name, std::string(kernelClassName(k.cls)), k.op, k.dur.count, k.dur.total_ns});
  for (const auto& c : run.collectives)
    s.collectives.push_back({collectiveKey(c.collective, c.dtype, c.bytes, c.process_group), "", "", c.dur.count, c.dur.total_ns});
  s.job = jobFields(run.job);
  s.unprofiled_step_ns = unprofiled_step_ns;
  s.unprofiled_path = std::move(unprofiled_path);
  return s;
}

Result<CompareResult> compareRuns(const RunSummary& base, const RunSummary& next) {
  if (base.ranks.empty() || next.ranks.empty()) return Error{"a side has no ranks"};
  if (base.ranks.size() != next.ranks.size())
    return Error{fmt::format("the sides have different rank counts ({} vs {}): compare runs of the same job layout",
                             base.ranks.size(), next.ranks.size())};
  for (const auto* side : {&base, &next})
    for (const auto& r : side->ranks)
      if (r.steps.empty()) return Error{fmt::format("{}: rank {} has no steps", side->source, r.rank)};
  CompareResult c;
  c.ranks = static_cast<int>(base.ranks.size());
  c.base_steps = c.new_steps = SIZE_MAX;
  // Each rank's steps summed (integers: the categories add up to the wall time exactly), as means
  // per step; the side's figure is the mean over ranks.
  std::array<double, kCategoryCount> sb{}, sn{};
  double wb = 0, wn = 0;
  const double nr = static_cast<double>(c.ranks);
  auto sums = [](const RankSummary& r, std::array<int64_t, kCategoryCount>& cat, int64_t& wall) {
    cat = {};
    wall = 0;
    for (const auto& s : r.steps) {
      auto x = categoriesOf(s);
      for (size_t k = 0; k < kCategoryCount; ++k) cat[k] += x[k];
      wall += s.wall;
    }
  };
  for (size_t i = 0; i < base.ranks.size(); ++i) {
    std::array<int64_t, kCategoryCount> cb, cn;
    int64_t tb, tn;
    sums(base.ranks[i], cb, tb);
    sums(next.ranks[i], cn, tn);
    const double kb = static_cast<double>(base.ranks[i].steps.size()), kn = static_cast<double>(next.ranks[i].steps.size());
    std::vector<Delta> per;
    for (size_t k = 0; k < kCategoryCount; ++k) {
      sb[k] += static_cast<double>(cb[k]) / kb, sn[k] += static_cast<double>(cn[k]) / kn;
      per.push_back({categoryName(k), static_cast<double>(cb[k]) / kb, static_cast<double>(cn[k]) / kn});
    }
    c.rank_categories.push_back(std::move(per));
    c.rank_ids.push_back(base.ranks[i].rank);
    wb += static_cast<double>(tb) / kb, wn += static_cast<double>(tn) / kn;
    c.base_steps = std::min(c.base_steps, base.ranks[i].steps.size());
    c.new_steps = std::min(c.new_steps, next.ranks[i].steps.size());
    c.base_median_ns += medianOf(base.ranks[i]) / nr;
    c.new_median_ns += medianOf(next.ranks[i]) / nr;
    c.base_spread = std::max(c.base_spread, spreadOf(base.ranks[i]));
    c.new_spread = std::max(c.new_spread, spreadOf(next.ranks[i]));
  }
  c.base_step_ns = wb / nr;
  c.new_step_ns = wn / nr;
  for (size_t k = 0; k < kCategoryCount; ++k) c.categories.push_back({categoryName(k), sb[k] / nr, sn[k] / nr});
  c.band = std::max(c.base_spread, c.new_spread);
  if (c.base_steps < 2 || c.new_steps < 2)
    c.notes.push_back("one step on a side: no step-to-step spread, so no noise band (record 3 or more steps)");
  if (base.unprofiled_step_ns > 0 && next.unprofiled_step_ns > 0) {
    c.basis = "un-profiled (replay)";
    c.band = std::max(c.band, kUnprofiledEstimateError);
    c.base_verdict_ns = base.unprofiled_step_ns;
    c.new_verdict_ns = next.unprofiled_step_ns;
    if (!base.unprofiled_path.empty() && !next.unprofiled_path.empty()) {
      // The steps as their critical paths add up (the rounding of the estimates aside), matched by
      // category name (a saved document may list them in another order).
      std::map<std::string, std::pair<double, double>> m;
      for (const auto& [k, v] : base.unprofiled_path) m[k].first += v;
      for (const auto& [k, v] : next.unprofiled_path) m[k].second += v;
      c.base_verdict_ns = c.new_verdict_ns = 0;
      for (size_t i = 0; i < kCategoryCount; ++i) {
        const std::string k = categoryName(i);
        auto it = m.find(k);
        if (it == m.end()) continue;
        c.unprofiled_categories.push_back({k, it->second.first, it->second.second});
        c.base_verdict_ns += it->second.first;
        c.new_verdict_ns += it->second.second;
        m.erase(it);
      }
      for (const auto& [k, v] : m) {  // names this version does not know: kept, so the sum holds
        c.unprofiled_categories.push_back({k, v.first, v.second});
        c.base_verdict_ns += v.first;
        c.new_verdict_ns += v.second;
      }
    }
  } else {
    c.basis = "traced";
    c.base_verdict_ns = c.base_median_ns;
    c.new_verdict_ns = c.new_median_ns;
  }
  c.change = c.base_verdict_ns > 0 ? c.new_verdict_ns / c.base_verdict_ns - 1 : 0;
  c.verdict = std::abs(c.change) <= c.band ? "no change beyond noise" : c.change < 0 ? "faster" : "slower";
  // Totals over all ranks and steps / rank-steps: per step, mean over ranks.
  const double b_div = static_cast<double>(base.steps()), n_div = static_cast<double>(next.steps());
  c.classes = deltas(base.classes, next.classes, b_div, n_div, false, nullptr);
  c.kernels = deltas(base.kernels, next.kernels, b_div, n_div, true, &c.kernels_only);
  c.collectives = deltas(base.collectives, next.collectives, b_div, n_div, false, nullptr);
  c.groups = grouped(c.categories);
  c.unprofiled_groups = grouped(c.unprofiled_categories);
  std::map<std::string, std::string> bj(base.job.begin(), base.job.end());
  std::string unseen;
  for (const auto& [k, v] : next.job) {
    auto it = bj.find(k);
    if (it == bj.end() || it->second == v) continue;
    if (it->second.find("unknown") != std::string::npos || v.find("unknown") != std::string::npos) unseen += (unseen.empty() ? "" : ", ") + k;
    else c.job_changes.push_back(k + ": " + it->second + " -> " + v);
  }
  if (!unseen.empty()) c.notes.push_back("the job profile cannot tell on one side: " + unseen);
  return c;
}

bool slowerThan(const CompareResult& r, double pct) { return r.change > pct / 100.0 + r.band; }

}  // namespace gpudoctor
