#include "analysis/compare.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "analysis/digest.h"
#include "analysis/kernel_class.h"
#include "analysis/replay/replay.h"
#include "common/numeric_check.h"

namespace gpudoctor {

namespace {

constexpr size_t kCategoryCount = kPathCategoryCount;

std::string categoryName(size_t k) { return std::string(pathCategoryName(static_cast<PathCategory>(k))); }

std::array<int64_t, kCategoryCount> categoriesOf(const StepFigures& s) {
  return rankingCategories(s.compute, s.comm_exposed, s.copies, s.idle_host, s.idle_sync, s.idle_dependency,
                           s.idle_other, s.idle_host_loader, s.idle_sync_loader);
}

std::vector<int64_t> wallsOf(const RankSummary& r) {
  std::vector<int64_t> w;
  for (const auto& s : r.steps) w.push_back(s.wall);
  return w;
}

// The GPU's busy time in each step: compute and the copies no kernel hides (the exposed communication
// left out: on several ranks it is mostly waiting for the others).
std::vector<int64_t> busyOf(const RankSummary& r) {
  std::vector<int64_t> w;
  for (const auto& s : r.steps) w.push_back(s.compute + s.copies);
  return w;
}

// The median absolute deviation from m.
double mad(const std::vector<double>& v, double m) {
  std::vector<double> d;
  for (double x : v) d.push_back(std::abs(x - m));
  return median(std::move(d));
}

// A kernel name without "void ", leading anonymous namespaces, template arguments and parameters.
std::string_view shortName(std::string_view n) {
  if (n.substr(0, 5) == "void ") n.remove_prefix(5);
  for (std::string_view anon = "(anonymous namespace)::"; n.substr(0, anon.size()) == anon;)
    n.remove_prefix(anon.size());
  size_t cut = n.find_first_of("<(");
  if (cut != std::string_view::npos) n = n.substr(0, cut);
  return n;
}

// A kernel name without its template arguments, parameters and numbers: the same kernel of
// another build or shape matches ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64...").
std::string stem(std::string_view n) {
  n = shortName(n);
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
                          double n_steps, bool by_stem, std::vector<std::string>* only,
                          std::map<std::string, std::string>* shown_out = nullptr,
                          std::vector<std::string>* only_shown = nullptr) {
  std::map<std::string, std::pair<double, double>> m;
  std::map<std::string, int> seen;  // 1 base, 2 new
  auto key = [&](const TimeTotal& t) { return by_stem ? t.cls + ": " + stem(t.name) : t.name; };
  for (const auto& t : b) m[key(t)].first += static_cast<double>(t.total_ns) / b_steps, seen[key(t)] |= 1;
  for (const auto& t : n) m[key(t)].second += static_cast<double>(t.total_ns) / n_steps, seen[key(t)] |= 2;
  // Kernels in one side's top list only, launched by the same operator with the same input shapes
  // on both sides (a library picked another kernel for the same GEMM): paired by that operator.
  std::map<std::string, std::string> op_of;                      // stem key -> operator
  std::map<std::string, std::pair<std::string, int64_t>> shown;  // stem key -> its costliest kernel's short name
  if (by_stem)
    for (const auto* side : {&b, &n})
      for (const auto& t : *side)
        if (auto& s = shown[key(t)]; s.first.empty() || t.total_ns > s.second)
          s = {t.cls + ": " + std::string(shortName(t.name)), t.total_ns};
  auto shownOf = [&](const std::string& k) { return shown.count(k) ? shown[k].first : k; };
  std::map<std::string, std::string> shown_pairs;  // "by operator" keys -> their shown name
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
    std::string name = "by operator " + op + ": ", readable = name;
    std::pair<double, double> sum{0, 0};
    for (size_t i = 0; i < sides.first.size(); ++i) {
      name += (i ? " + " : "") + sides.first[i], sum.first += m[sides.first[i]].first;
      readable += (i ? " + " : "") + shownOf(sides.first[i]);
    }
    name += " -> ", readable += " -> ";
    for (size_t i = 0; i < sides.second.size(); ++i) {
      name += (i ? " + " : "") + sides.second[i], sum.second += m[sides.second[i]].second;
      readable += (i ? " + " : "") + shownOf(sides.second[i]);
    }
    shown_pairs[name] = readable;
    for (const auto& k : sides.first) m.erase(k);
    for (const auto& k : sides.second) m.erase(k);
    m[name] = sum;
    seen[name] = 3;
  }
  std::vector<Delta> out;
  for (const auto& [k, v] : m) {
    if (only && seen[k] != 3) {
      for (auto [list, name] : {std::pair{only, k}, {only_shown, shownOf(k)}})
        if (list)
          list->push_back(fmt::format("{}: {} ({:.3f} ms/step)",
                                      seen[k] == 1 ? "gone from the top kernels" : "new in the top kernels", name,
                                      (seen[k] == 1 ? v.first : v.second) / 1e6));
      continue;
    }
    out.push_back({k, v.first, v.second});
    if (shown_out) (*shown_out)[k] = shown_pairs.count(k) ? shown_pairs[k] : shownOf(k);
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
    if (it == g.end())
      g.push_back({name, c.base, c.next});
    else
      it->base += c.base, it->next += c.next;
  }
  std::stable_sort(g.begin(), g.end(),
                   [](const Delta& a, const Delta& b) { return std::abs(a.delta()) > std::abs(b.delta()); });
  return g;
}

// The un-profiled step by its critical path, matched by category name (a saved document may list
// them in another order); the verdict's figures become the paths' sums (the rounding aside, the
// estimates), so the deltas add up.
void unprofiledCategories(const RunSummary& base, const RunSummary& next, CompareResult& c) {
  std::map<std::string, std::pair<double, double>> m;
  for (const auto& [k, v] : base.unprofiled_path) m[k].first += v;
  for (const auto& [k, v] : next.unprofiled_path) m[k].second += v;
  c.base_verdict_ns = c.new_verdict_ns = 0;
  auto add = [&](const std::string& k, std::pair<double, double> v) {
    c.unprofiled_categories.push_back({k, v.first, v.second});
    c.base_verdict_ns += v.first;
    c.new_verdict_ns += v.second;
  };
  for (size_t i = 0; i < kCategoryCount; ++i) {
    auto it = m.find(categoryName(i));
    if (it == m.end()) continue;
    add(it->first, it->second);
    m.erase(it);
  }
  for (const auto& [k, v] : m) add(k, v);  // names this version does not know: kept, so the sum holds
}

// The share of a side's traced step that its un-profiled estimate removes (-1: unknown).
double profilerShare(const RunSummary& s, double traced_median_ns) {
  return profilerShareOf(s.unprofiled_step_ns, s.traced_step_ns > 0 ? s.traced_step_ns : traced_median_ns);
}

// One step definition on both sides: the un-profiled estimates when both have one, else the
// replay's traced steady-state steps when both have them, else the robust traced medians.
void setBasis(const RunSummary& base, const RunSummary& next, CompareResult& c) {
  if (base.unprofiled_step_ns > 0 && next.unprofiled_step_ns > 0) {
    c.basis = "un-profiled (replay)";
    c.base_verdict_ns = base.unprofiled_step_ns;
    c.new_verdict_ns = next.unprofiled_step_ns;
    c.base_traced_ns = std::max(base.traced_step_ns, c.base_median_ns);
    c.new_traced_ns = std::max(next.traced_step_ns, c.new_median_ns);
    c.base_profiler_share = profilerShare(base, c.base_median_ns);
    c.new_profiler_share = profilerShare(next, c.new_median_ns);
    if (!base.unprofiled_path.empty() && !next.unprofiled_path.empty()) unprofiledCategories(base, next, c);
    return;
  }
  if (base.unprofiled_step_ns > 0 || next.unprofiled_step_ns > 0)
    c.notes.push_back(
        fmt::format("only the {} side has an un-profiled estimate: both are judged on the traced step "
                    "(re-run analyze --json with this version to keep it)",
                    base.unprofiled_step_ns > 0 ? "base" : "new"));
  const bool steady = base.traced_step_ns > 0 && next.traced_step_ns > 0;
  c.basis = steady ? "traced (steady state)" : "traced (median)";
  c.base_verdict_ns = steady ? base.traced_step_ns : c.base_median_ns;
  c.new_verdict_ns = steady ? next.traced_step_ns : c.new_median_ns;
}

// The band, the speedup with its range, and the verdict.
void judge(CompareResult& c) {
  const bool unprofiled = c.basis == "un-profiled (replay)";
  double h2 = std::pow(std::log1p(unprofiled ? kUnprofiledEstimateError : kTracedRunToRun), 2) +
              c.base_noise * c.base_noise + c.new_noise * c.new_noise;
  for (double share : {c.base_profiler_share, c.new_profiler_share})
    if (unprofiled && share > 0) h2 += std::pow(kEstimateErrorPerProfilerShare * share, 2);
  c.band = std::min(std::expm1(std::sqrt(h2)), kMaxBand);
  const bool known = c.base_verdict_ns > 0 && c.new_verdict_ns > 0;
  c.change = known ? c.new_verdict_ns / c.base_verdict_ns - 1 : 0;
  c.speedup = known ? c.base_verdict_ns / c.new_verdict_ns : 1;
  c.speedup_low = c.speedup / (1 + c.band);
  c.speedup_high = c.speedup * (1 + c.band);
  if (unprofiled && known && c.base_busy_ns > 0 && c.new_busy_ns > 0) {
    auto widen = [](double a, double b) { return std::expm1(std::hypot(a, b)); };
    const double least = c.base_busy_ns / c.new_traced_ns / (1 + widen(c.base_busy_noise, c.new_noise));
    const double most = c.base_traced_ns / c.new_busy_ns * (1 + widen(c.base_noise, c.new_busy_noise));
    c.speedup_low = std::max(c.speedup_low, std::min(least, c.speedup));
    c.speedup_high = std::min(c.speedup_high, std::max(most, c.speedup));
  }
  c.verdict = c.speedup_low > 1 ? "faster" : c.speedup_high < 1 ? "slower" : "no change beyond noise";
}

// What says the two runs are different jobs: another GPU, world size or model (its parameter tensors).
std::vector<std::string> differentJob(const RunSummary& b, const RunSummary& n) {
  std::vector<std::string> w;
  if (!b.gpu.empty() && !n.gpu.empty() && b.gpu != n.gpu)
    w.push_back(fmt::format("different GPUs: {} -> {}", b.gpu, n.gpu));
  if (b.world_size > 0 && n.world_size > 0 && b.world_size != n.world_size)
    w.push_back(fmt::format("different world sizes: {} -> {} ranks", b.world_size, n.world_size));
  if (b.param_tensors > 0 && n.param_tensors > 0 && std::abs(b.param_tensors - n.param_tensors) >= 0.5)
    w.push_back(fmt::format("different models: {:g} -> {:g} parameter tensors", b.param_tensors, n.param_tensors));
  return w;
}

}  // namespace

StepStats robustSteps(const std::vector<int64_t>& walls) {
  StepStats st;
  std::vector<double> all(walls.begin(), walls.end());
  const double m = median(all);
  const double cut = std::max(kOutlierSigmas * 1.4826 * mad(all, m), kOutlierShare * m);
  std::vector<double> kept;
  for (double x : all)
    if (std::abs(x - m) <= cut) kept.push_back(x);
  st.kept = kept.size();
  st.left_out = all.size() - kept.size();
  st.median_ns = median(kept);
  st.noise = st.median_ns > 0 ? 1.4826 * mad(kept, st.median_ns) / st.median_ns : 0;
  return st;
}

RunSummary summarizeRun(const RunAnalysis& run, double unprofiled_step_ns,
                        std::vector<std::pair<std::string, double>> unprofiled_path, double traced_step_ns) {
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
    s.collectives.push_back(
        {collectiveKey(c.collective, c.dtype, c.bytes, c.process_group), "", "", c.dur.count, c.dur.total_ns});
  s.job = jobFields(run.job);
  s.unprofiled_step_ns = unprofiled_step_ns;
  s.unprofiled_path = std::move(unprofiled_path);
  s.traced_step_ns = traced_step_ns;
  if (!run.ranks.empty() && !run.ranks.front().trace->devices.empty())
    s.gpu = run.ranks.front().trace->devices.front().name;
  s.world_size = run.job.ranks.value_or(-1);
  s.param_tensors = run.job.param_tensors;
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
    const double kb = static_cast<double>(base.ranks[i].steps.size()),
                 kn = static_cast<double>(next.ranks[i].steps.size());
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
    const StepStats rb = robustSteps(wallsOf(base.ranks[i])), rn = robustSteps(wallsOf(next.ranks[i]));
    const StepStats bb = robustSteps(busyOf(base.ranks[i])), bn = robustSteps(busyOf(next.ranks[i]));
    c.base_busy_ns += bb.median_ns / nr;
    c.new_busy_ns += bn.median_ns / nr;
    c.base_busy_noise = std::max(c.base_busy_noise, bb.noise);
    c.new_busy_noise = std::max(c.new_busy_noise, bn.noise);
    c.base_median_ns += rb.median_ns / nr;
    c.new_median_ns += rn.median_ns / nr;
    c.base_noise = std::max(c.base_noise, rb.noise);
    c.new_noise = std::max(c.new_noise, rn.noise);
    c.base_left_out = std::max(c.base_left_out, rb.left_out);
    c.new_left_out = std::max(c.new_left_out, rn.left_out);
  }
  c.base_step_ns = wb / nr;
  c.new_step_ns = wn / nr;
  for (size_t k = 0; k < kCategoryCount; ++k) c.categories.push_back({categoryName(k), sb[k] / nr, sn[k] / nr});
  if (c.base_steps < 2 || c.new_steps < 2)
    c.notes.push_back("one step on a side: no step-to-step noise (record 3 or more steps)");
  setBasis(base, next, c);
  judge(c);
  if (c.verdict == "no change beyond noise") {
    const bool base_side = c.base_profiler_share >= c.new_profiler_share;
    const double share = base_side ? c.base_profiler_share : c.new_profiler_share;
    if (share > kProfilerShareUnsure)
      c.notes.push_back(fmt::format(
          "the {} side's un-profiled estimate takes {:.0f} % of its traced step away as the profiler's cost: "
          "that estimate is the least sure part of this verdict. For a firmer one, trace both runs with fewer "
          "profiler options (with_stack, record_shapes and profile_memory off), or time both without the "
          "profiler",
          base_side ? "base" : "new", 100 * share));
  }
  // Totals over all ranks and steps / rank-steps: per step, mean over ranks.
  const double b_div = static_cast<double>(base.steps()), n_div = static_cast<double>(next.steps());
  c.classes = deltas(base.classes, next.classes, b_div, n_div, false, nullptr);
  std::map<std::string, std::string> shown;
  c.kernels = deltas(base.kernels, next.kernels, b_div, n_div, true, &c.kernels_only, &shown, &c.kernels_only_shown);
  for (const auto& k : c.kernels) c.kernels_shown.push_back(shown.count(k.name) ? shown[k.name] : k.name);
  c.collectives = deltas(base.collectives, next.collectives, b_div, n_div, false, nullptr);
  c.groups = grouped(c.categories);
  c.unprofiled_groups = grouped(c.unprofiled_categories);
  std::map<std::string, std::string> bj(base.job.begin(), base.job.end());
  std::string unseen;
  for (const auto& [k, v] : next.job) {
    auto it = bj.find(k);
    if (it == bj.end() || it->second == v) continue;
    if (it->second.find("unknown") != std::string::npos || v.find("unknown") != std::string::npos)
      unseen += (unseen.empty() ? "" : ", ") + k;
    else
      c.job_changes.push_back(k + ": " + it->second + " -> " + v);
  }
  if (!unseen.empty()) c.notes.push_back("the job profile cannot tell on one side: " + unseen);
  c.warnings = differentJob(base, next);
  return c;
}

bool slowerThan(const CompareResult& r, double pct) { return r.change > (1 + r.band) * (1 + pct / 100.0) - 1; }

}  // namespace gpudoctor
