#include "report/compare_report.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/style.h"
#include "report/text.h"

namespace gpudoctor {

namespace {
double ms(double ns) { return ns / 1e6; }

std::string fit(const std::string& s, size_t n) { return s.size() > n ? s.substr(0, n - 3) + "..." : s; }

std::string basisTitle(const CompareResult& r) {
  if (r.basis == "un-profiled (replay)") return "Un-profiled (replay)";
  return r.basis == "traced (steady state)" ? "Traced steady-state" : "Traced median";
}

// "faster 1.75x (1.52-2.01x), beyond the 15.0 % band" or "no change beyond noise (1.05x, 0.91-1.21x ...)".
std::string verdictLine(const CompareResult& r) {
  const std::string range = fmt::format("{:.2f}x, range {:.2f}-{:.2f}x", r.speedup, r.speedup_low, r.speedup_high);
  if (r.verdict == "no change beyond noise")
    return fmt::format("no change beyond noise ({}; the {:.1f} % band)", range, 100 * r.band);
  return fmt::format("{} by {:.1f} % ({}), beyond the {:.1f} % band", r.verdict, 100 * std::abs(r.change), range,
                     100 * r.band);
}

// What the band is made of: two sentences, wrapped at the report width.
std::string noiseLine(const CompareResult& r) {
  std::string o = fmt::format("band {:.1f} %: step noise {:.1f} % (base), {:.1f} % (new) (median/MAD", 100 * r.band,
                              100 * r.base_noise, 100 * r.new_noise);
  if (r.base_left_out + r.new_left_out > 0)
    o += fmt::format("; {} and {} steps left out", r.base_left_out, r.new_left_out);
  o = wrapLed("  ", o + ")", "    ");
  if (r.basis == "un-profiled (replay)")
    o += wrapLed("    ",
                 fmt::format("and the estimates' error: {:.1f} % + {:.2f} x the profiler's share of the traced step "
                             "({:.0f} %, {:.0f} %)",
                             100 * kUnprofiledEstimateError, kEstimateErrorPerProfilerShare,
                             100 * std::max(0.0, r.base_profiler_share), 100 * std::max(0.0, r.new_profiler_share)),
                 "      ");
  else
    o += wrapLed("    ",
                 fmt::format("and the traced step's run-to-run spread {:.1f} % (the profiler's inflation varies)",
                             100 * kTracedRunToRun),
                 "      ");
  return o;
}

// The kernel rows' names: as the traces spell them (kernels_shown), not the match keys' "#" stems.
const std::string& rowName(const std::vector<Delta>& v, const std::vector<std::string>* shown, size_t i) {
  return shown && i < shown->size() ? (*shown)[i] : v[i].name;
}
}  // namespace

// Laid out in the report width (textWidth): prose wraps, the lists' names are cut to fit.
std::string renderCompareTerminal(const CompareResult& r, const CompareLabels& l, bool color) {
  const size_t width = textWidth();
  auto heading = [&](const std::string& title) {
    std::string t = wrapLed("", title, "  ");
    t.pop_back();
    return "\n" + paint(t, Tone::kHeading, color) + "\n";
  };
  std::string o;
  o += paint(fmt::format("gpudoctor compare: {} rank{}; {} -> {} steps per rank", r.ranks, r.ranks == 1 ? "" : "s",
                         r.base_steps, r.new_steps),
             Tone::kHeading, color) +
       "\n";
  o += "  base: " + fit(l.base, width - 8) + "\n  new:  " + fit(l.next, width - 8) + "\n";
  for (const auto& w : r.warnings)
    o += wrapLed("  ", "warning: " + w + ": these may be different jobs", "    ")
             .replace(2, 8, paint("warning:", Tone::kWarning, color));
  const double d = r.new_step_ns - r.base_step_ns;
  o += "\n" + wrapLed("",
                      fmt::format("Traced step, mean: {:.3f} -> {:.3f} ms ({:+.3f} ms, {:+.1f} %); median: {:.3f} -> "
                                  "{:.3f} ms",
                                  ms(r.base_step_ns), ms(r.new_step_ns), ms(d),
                                  r.base_step_ns > 0 ? 100 * d / r.base_step_ns : 0.0, ms(r.base_median_ns),
                                  ms(r.new_median_ns)),
                      "  ");
  o += fmt::format("{} step: {:.3f} -> {:.3f} ms ({:+.1f} %)\n", basisTitle(r), ms(r.base_verdict_ns),
                   ms(r.new_verdict_ns), 100 * r.change);
  std::string verdict = wrapLed("", "Verdict: " + verdictLine(r), "  ").substr(9);
  verdict.pop_back();
  o += "Verdict: " +
       (r.verdict == "slower"   ? paint(verdict, Tone::kCritical, color)
        : r.verdict == "faster" ? paint(verdict, Tone::kGood, color)
                                : verdict) +
       "\n";
  o += noiseLine(r);
  if (l.fail_if_slower_pct >= 0)
    o += fmt::format("  gate --fail-if-slower {:g} %: {}\n", l.fail_if_slower_pct,
                     slowerThan(r, l.fail_if_slower_pct)
                         ? paint("FAILED (slower beyond the noise band)", Tone::kCritical, color)
                         : paint("passed", Tone::kGood, color));
  for (const auto& n : r.notes) o += wrapLed("  ", "note: " + n, "    ");

  auto table = [&](const char* title, std::vector<Delta> cats, const std::vector<Delta>& groups) {
    o += heading(title);
    o += fmt::format("  {:<14} {:>10} {:>10} {:>10}\n", "category", "base", "new", "delta");
    std::stable_sort(cats.begin(), cats.end(),
                     [](const Delta& a, const Delta& b) { return std::abs(a.delta()) > std::abs(b.delta()); });
    for (const auto& c : cats)
      o += fmt::format("  {:<14} {:>10.3f} {:>10.3f} {:>+10.3f}\n", c.name, ms(c.base), ms(c.next), ms(c.delta()));
    std::string g = "grouped:";
    for (const auto& x : groups) g += fmt::format(" {} {:+.3f}", x.name, ms(x.delta()));
    o += wrapLed("  ", g, "    ");
  };
  if (!r.unprofiled_categories.empty())
    table("Where the un-profiled step moved (replay's critical path, ms per step; the deltas add up)",
          r.unprofiled_categories, r.unprofiled_groups);
  table("Where the traced step moved (GPU time, ms per step, mean over ranks; the deltas add up)", r.categories,
        r.groups);
  // A row: "  NAME  base -> new  delta", the names as wide as the longest, cut to what the width leaves
  // (35 columns of figures).
  auto list = [&](const char* title, const std::vector<Delta>& v, size_t n,
                  const std::vector<std::string>* shown = nullptr) {
    if (v.empty()) return;
    o += heading(fmt::format("{} (ms per step)", title));
    size_t name_width = 14;
    for (size_t i = 0; i < v.size() && i < n; ++i) name_width = std::max(name_width, rowName(v, shown, i).size());
    name_width = std::min(name_width, width - 35);
    for (size_t i = 0; i < v.size() && i < n; ++i) {
      if (std::abs(v[i].delta()) < 1e3) break;  // under a microsecond a step: nothing moved
      o += fmt::format("  {:<{}} {:>9.3f} -> {:>9.3f} {:>+9.3f}\n", fit(rowName(v, shown, i), name_width), name_width,
                       ms(v[i].base), ms(v[i].next), ms(v[i].delta()));
    }
  };
  list("Kernel classes that moved most", r.classes, 6);
  list("Kernels that moved most (matched by class and name stem)", r.kernels, 6, &r.kernels_shown);
  const auto& only = r.kernels_only_shown.size() == r.kernels_only.size() ? r.kernels_only_shown : r.kernels_only;
  for (size_t i = 0; i < only.size() && i < 4; ++i) o += "  " + fit(only[i], width - 2) + "\n";
  list("Collectives that moved most", r.collectives, 4);
  o += heading("Job differences (the likely causes)");
  if (r.job_changes.empty()) o += "  none seen in the job profiles\n";
  for (const auto& j : r.job_changes) o += wrapLed("  ", j, "    ");
  return o;
}

namespace {
std::string esc(std::string_view s) {
  std::string o;
  for (char c : s) {
    if (c == '<')
      o += "&lt;";
    else if (c == '>')
      o += "&gt;";
    else if (c == '&')
      o += "&amp;";
    else if (c == '\'')
      o += "&#39;";
    else if (c == '"')
      o += "&quot;";
    else
      o += c;
  }
  return o;
}

constexpr const char* kCategoryColors[] = {"#2b8a3e", "#e8590c", "#c92a2a", "#f08c00", "#862e9c", "#1971c2", "#ced4da"};

// Base and new as two stacked bars of the categories, on one scale.
std::string bars(const char* id, const std::vector<Delta>& cats) {
  const int W = 900, left = 60, row = 30;
  double total_b = 0, total_n = 0;
  for (const auto& c : cats) total_b += std::max(0.0, c.base), total_n += std::max(0.0, c.next);
  const double scale = std::max(total_b, total_n);
  std::string o = fmt::format("<svg id='{}' width={} height={} role=img>", id, W, 2 * row + 10);
  for (int side = 0; side < 2; ++side) {
    const int y = 5 + side * row;
    o += fmt::format("<text x=0 y={} font-size=12>{}</text>", y + 16, side ? "new" : "base");
    double x = left;
    for (size_t i = 0; i < cats.size(); ++i) {
      const double v = std::max(0.0, side ? cats[i].next : cats[i].base);
      const double w = scale > 0 ? v / scale * (W - left - 90) : 0;
      if (w > 0)
        o += fmt::format("<rect x={:.1f} y={} width={:.1f} height={} fill='{}'><title>{}: {:.3f} ms</title></rect>", x,
                         y, w, row - 8, kCategoryColors[i % 7], esc(cats[i].name), ms(v));
      x += w;
    }
    o += fmt::format("<text x={:.1f} y={} font-size=12>{:.2f} ms</text>", x + 4, y + 16, ms(side ? total_n : total_b));
  }
  o += "</svg><div>";
  for (size_t i = 0; i < cats.size(); ++i)
    o += fmt::format(
        "<span style='margin-right:12px;font-size:12px'><i style='display:inline-block;width:10px;"
        "height:10px;background:{}'></i> {}</span>",
        kCategoryColors[i % 7], esc(cats[i].name));
  return o + "</div>";
}

// `shown`: the rows' names for readers where the deltas' own are match keys (kernels).
std::string deltaTable(const char* id, const std::vector<Delta>& v, size_t n,
                       const std::vector<std::string>* shown = nullptr) {
  std::string o =
      fmt::format("<table id='{}'><tr><th>name</th><th>base ms</th><th>new ms</th><th>delta ms</th></tr>", id);
  for (size_t i = 0; i < v.size() && i < n; ++i)
    o += fmt::format("<tr><td>{}</td><td>{:.3f}</td><td>{:.3f}</td><td>{:+.3f}</td></tr>",
                     esc(shown && i < shown->size() ? (*shown)[i] : v[i].name), ms(v[i].base), ms(v[i].next),
                     ms(v[i].delta()));
  return o + "</table>";
}
}  // namespace

std::string renderCompareHtml(const CompareResult& r, const CompareLabels& l) {
  std::string o = R"(<!doctype html><html lang=en><head><meta charset=utf-8><title>gpudoctor compare</title><style>
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:980px;color:#212529}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #dee2e6}
table{border-collapse:collapse;max-width:100%}td,th{border:1px solid #dee2e6;padding:3px 8px;text-align:left}
td:first-child{overflow-wrap:anywhere}
</style></head><body>)";
  o += fmt::format("<h1>gpudoctor compare: {}, {:+.1f} % ({})</h1>", esc(r.verdict), 100 * r.change, esc(r.basis));
  o += "<p>base: " + esc(l.base) + "<br>new: " + esc(l.next) + "</p>";
  o +=
      fmt::format("<p id=verdict>{} rank{}, {} and {} steps per rank. Traced step {:.3f} &rarr; {:.3f} ms. {}: {}.</p>",
                  r.ranks, r.ranks == 1 ? "" : "s", r.base_steps, r.new_steps, ms(r.base_step_ns), ms(r.new_step_ns),
                  esc(basisTitle(r)), esc(verdictLine(r)));
  for (const auto& w : r.warnings)
    o += "<p class=warning><b>warning:</b> " + esc(w) + ": these may be different jobs</p>";
  if (!r.unprofiled_categories.empty()) {
    o += "<h2>The un-profiled step (replay's critical path)</h2>" + bars("bars-unprofiled", r.unprofiled_categories);
    o += deltaTable("deltas-unprofiled", r.unprofiled_categories, 7);
  }
  o += "<h2>The traced step (GPU time by category)</h2>" + bars("bars-traced", r.categories);
  o += deltaTable("deltas-traced", r.categories, 7);
  o += "<h2>Kernel classes</h2>" + deltaTable("classes", r.classes, 10);
  o += "<h2>Kernels (class and name stem)</h2>" + deltaTable("kernels", r.kernels, 10, &r.kernels_shown);
  if (!r.collectives.empty()) o += "<h2>Collectives</h2>" + deltaTable("collectives", r.collectives, 10);
  o += "<h2>Job differences</h2><ul id=job-changes>";
  for (const auto& j : r.job_changes) o += "<li>" + esc(j) + "</li>";
  if (r.job_changes.empty()) o += "<li>none seen in the job profiles</li>";
  o += "</ul>";
  for (const auto& n : r.notes) o += "<p><small>" + esc(n) + "</small></p>";
  return o + "</body></html>\n";
}

std::string renderCompareJson(const CompareResult& r, const CompareLabels& l) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["tool"] = "gpudoctor compare";
  j["schema_version"] = 2;  // bumped when a field changes meaning or goes away (2: noise, verdict.speedup)
  j["version"] = GPUDOCTOR_VERSION;
  j["units"] = "times in nanoseconds per step (mean over ranks of each rank's mean step), shares 0-1";
  j["base"] = l.base;
  j["new"] = l.next;
  j["ranks"] = r.ranks;
  j["steps"] = {{"base", r.base_steps}, {"new", r.new_steps}};
  j["step_ns"] = {{"base", r.base_step_ns}, {"new", r.new_step_ns}, {"delta", r.new_step_ns - r.base_step_ns}};
  auto deltas = [](const std::vector<Delta>& v) {
    ordered_json a = ordered_json::array();
    for (const auto& d : v)
      a.push_back({{"name", d.name}, {"base_ns", d.base}, {"new_ns", d.next}, {"delta_ns", d.delta()}});
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
  auto orNull = [](double v) { return v >= 0 ? ordered_json(v) : ordered_json(); };
  j["noise"] = {{"base_step_noise", r.base_noise},
                {"new_step_noise", r.new_noise},
                {"base_steps_left_out", r.base_left_out},
                {"new_steps_left_out", r.new_left_out},
                {"base_profiler_share", orNull(r.base_profiler_share)},
                {"new_profiler_share", orNull(r.new_profiler_share)},
                {"estimate_error", r.basis == "un-profiled (replay)" ? kUnprofiledEstimateError : kTracedRunToRun},
                {"estimate_error_per_profiler_share", kEstimateErrorPerProfilerShare},
                {"band", r.band}};
  j["traced_median_ns"] = {{"base", r.base_median_ns}, {"new", r.new_median_ns}};
  j["gpu_busy_ns"] = {{"base", r.base_busy_ns}, {"new", r.new_busy_ns}};
  j["verdict"] = {{"basis", r.basis},           {"base_ns", r.base_verdict_ns},
                  {"new_ns", r.new_verdict_ns}, {"change", r.change},
                  {"speedup", r.speedup},       {"speedup_range", {r.speedup_low, r.speedup_high}},
                  {"result", r.verdict}};
  j["warnings"] = r.warnings;
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
