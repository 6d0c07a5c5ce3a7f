#include "report/compare_report.h"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace gpudoctor {

namespace {
double ms(double ns) { return ns / 1e6; }

std::string fit(std::string s, size_t n) { return s.size() > n ? s.substr(0, n - 3) + "..." : s; }
}  // namespace

std::string renderCompareTerminal(const CompareResult& r, const CompareLabels& l) {
  std::string o;
  o += fmt::format("gpudoctor compare: {} rank{}; {} -> {} steps per rank (mean steps)\n", r.ranks,
                   r.ranks == 1 ? "" : "s", r.base_steps, r.new_steps);
  o += "  base: " + fit(l.base, 92) + "\n  new:  " + fit(l.next, 92) + "\n";
  const double d = r.new_step_ns - r.base_step_ns;
  o += fmt::format("\nTraced step: {:.3f} -> {:.3f} ms ({:+.3f} ms, {:+.1f} %)\n", ms(r.base_step_ns), ms(r.new_step_ns),
                   ms(d), r.base_step_ns > 0 ? 100 * d / r.base_step_ns : 0.0);
  if (r.basis != "traced")
    o += fmt::format("Un-profiled step (replay): {:.3f} -> {:.3f} ms ({:+.1f} %)\n", ms(r.base_verdict_ns),
                     ms(r.new_verdict_ns), 100 * r.change);
  std::string verdict = r.verdict == "no change beyond noise"
                            ? fmt::format("no change beyond noise ({:+.1f} % within the {:.1f} % band)", 100 * r.change,
                                          100 * r.band)
                            : fmt::format("{} by {:.1f} % ({:.2f}x), beyond the {:.1f} % noise band", r.verdict,
                                          100 * std::abs(r.change),
                                          r.new_verdict_ns > 0 ? r.base_verdict_ns / r.new_verdict_ns : 0.0, 100 * r.band);
  o += (r.basis == "traced" ? "Verdict on the traced step: " : "Verdict on the un-profiled step (replay): ") + verdict + "\n";
  o += fmt::format("  noise: step-to-step spread {:.1f} % (base) and {:.1f} % (new), largest over ranks\n",
                   100 * r.base_spread, 100 * r.new_spread);
  if (l.fail_if_slower_pct >= 0)
    o += fmt::format("  gate --fail-if-slower {:g} %: {}\n", l.fail_if_slower_pct,
                     slowerThan(r, l.fail_if_slower_pct) ? "FAILED (slower beyond the noise band)" : "passed");
  for (const auto& n : r.notes) o += "  note: " + n + "\n";

  auto table = [&](const char* title, std::vector<Delta> cats, const std::vector<Delta>& groups) {
    o += title;
    o += fmt::format("  {:<14} {:>10} {:>10} {:>10}\n", "category", "base", "new", "delta");
    std::stable_sort(cats.begin(), cats.end(),
                     [](const Delta& a, const Delta& b) { return std::abs(a.delta()) > std::abs(b.delta()); });
    for (const auto& c : cats)
      o += fmt::format("  {:<14} {:>10.3f} {:>10.3f} {:>+10.3f}\n", c.name, ms(c.base), ms(c.next), ms(c.delta()));
    std::string g = "  grouped:";
    for (const auto& x : groups) g += fmt::format(" {} {:+.3f}", x.name, ms(x.delta()));
    o += g + "\n";
  };
  if (!r.unprofiled_categories.empty())
    table("\nWhere the un-profiled step moved (replay's critical path, ms per step; the deltas add up)\n",
          r.unprofiled_categories, r.unprofiled_groups);
  table("\nWhere the traced step moved (GPU time, ms per step, mean over ranks; the deltas add up)\n", r.categories, r.groups);
  auto list = [&](const char* title, const std::vector<Delta>& v, size_t n, size_t width) {
    if (v.empty()) return;
    o += fmt::format("\n{} (ms per step)\n", title);
    for (size_t i = 0; i < v.size() && i < n; ++i) {
      if (std::abs(v[i].delta()) < 1e3) break;  // under a microsecond a step: nothing moved
      o += fmt::format("  {:<{}} {:>9.3f} -> {:>9.3f} {:>+9.3f}\n", fit(v[i].name, width), width, ms(v[i].base),
                       ms(v[i].next), ms(v[i].delta()));
    }
  };
  list("Kernel classes that moved most", r.classes, 6, 52);
  list("Kernels that moved most (matched by class and name stem)", r.kernels, 6, 52);
  for (size_t i = 0; i < r.kernels_only.size() && i < 4; ++i) o += "  " + fit(r.kernels_only[i], 96) + "\n";
  list("Collectives that moved most", r.collectives, 4, 52);
  o += "\nJob differences (the likely causes)\n";
  if (r.job_changes.empty()) o += "  none seen in the job profiles\n";
  for (const auto& j : r.job_changes) o += "  " + fit(j, 96) + "\n";
  return o;
}

std::string renderCompareJson(const CompareResult& r, const CompareLabels& l) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["tool"] = "gpudoctor compare";
  j["version"] = GPUDOCTOR_VERSION;
  j["units"] = "times in nanoseconds per step (mean over ranks of each rank's mean step), shares 0-1";
  j["base"] = l.base;
  j["new"] = l.next;
  j["ranks"] = r.ranks;
  j["steps"] = {{"base", r.base_steps}, {"new", r.new_steps}};
  j["step_ns"] = {{"base", r.base_step_ns}, {"new", r.new_step_ns}, {"delta", r.new_step_ns - r.base_step_ns}};
  auto deltas = [](const std::vector<Delta>& v) {
    ordered_json a = ordered_json::array();
    for (const auto& d : v) a.push_back({{"name", d.name}, {"base_ns", d.base}, {"new_ns", d.next}, {"delta_ns", d.delta()}});
    return a;
  };
  j["categories"] = deltas(r.categories);
  j["unprofiled_categories"] = deltas(r.unprofiled_categories);
  j["groups"] = deltas(r.groups);
  j["unprofiled_groups"] = deltas(r.unprofiled_groups);
  ordered_json per = ordered_json::array();
  for (size_t i = 0; i < r.rank_categories.size(); ++i)
    per.push_back({{"rank", r.rank_ids[i]}, {"categories", deltas(r.rank_categories[i])}});
  j["per_rank"] = per;
  j["noise"] = {{"base_spread", r.base_spread}, {"new_spread", r.new_spread}, {"band", r.band}};
  j["verdict"] = {{"basis", r.basis},
                  {"base_ns", r.base_verdict_ns},
                  {"new_ns", r.new_verdict_ns},
                  {"change", r.change},
                  {"result", r.verdict}};
  if (l.fail_if_slower_pct >= 0)
    j["gate"] = {{"fail_if_slower_pct", l.fail_if_slower_pct}, {"failed", slowerThan(r, l.fail_if_slower_pct)}};
  j["kernel_classes"] = deltas(r.classes);
  j["kernels"] = deltas(r.kernels);
  j["kernels_in_one_top_list"] = r.kernels_only;
  j["collectives"] = deltas(r.collectives);
  j["job_changes"] = r.job_changes;
  j["notes"] = r.notes;
  return j.dump(2) + "\n";
}

}  // namespace gpudoctor
