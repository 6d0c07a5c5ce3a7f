// The page's operator view (the TensorBoard plugin's "Operator" page): which framework operators
// cost most on the host (their own time) and on the GPU (the work they launched), over all ranks'
// selected steps; at most kMaxOperators rows, so a page of many ranks or a gigabyte trace stays small.
#include <algorithm>

#include <fmt/format.h>

#include "analysis/operators.h"
#include "report/html_parts.h"

namespace gpudoctor {

namespace {

constexpr size_t kMaxOperators = 30;
constexpr size_t kMaxOperatorBars = 15;

// GPU self and host self time of the first operators, side by side.
std::string operatorChart(const OperatorSummary& s, double steps) {
  const size_t n = std::min(s.ops.size(), kMaxOperatorBars);
  const int W = 900, row = 24, left = 250, right = 120;
  double mx = 0;
  for (size_t i = 0; i < n; ++i)
    mx = std::max({mx, htmlMs(s.ops[i].gpu_self_ns / steps), htmlMs(s.ops[i].host_self_ns / steps)});
  const int h = static_cast<int>(n) * row + 26;
  std::string o =
      fmt::format("<svg id='chart-operators' class=chart viewBox='0 0 {0} {1}' width={0} height={1} role=img>", W, h);
  o += xAxis(left, W - left - right, mx, h - 22, 0, "ms/step");
  int y = 4;
  for (size_t i = 0; i < n; ++i) {
    const OperatorStats& p = s.ops[i];
    std::string label = p.name.size() > 38 ? p.name.substr(0, 35) + "..." : p.name;
    const double g = htmlMs(p.gpu_self_ns / steps), hs = htmlMs(p.host_self_ns / steps);
    const double wg = mx > 0 ? g / mx * (W - left - right) : 0, wh = mx > 0 ? hs / mx * (W - left - right) : 0;
    o += fmt::format(
        "<text x=0 y={} class=lbl>{}<title>{}</title></text>"
        "<rect x={} y={} width={:.1f} height=9 fill='#2b8a3e'><title>GPU self {:.3f} ms/step</title></rect>"
        "<rect x={} y={} width={:.1f} height=9 fill='#1971c2'><title>host self {:.3f} ms/step</title></rect>"
        "<text x={:.1f} y={} class=tick>{:.3f} / {:.3f}</text>",
        y + 14, htmlEscape(label), htmlEscape(p.name), left, y + 1, wg, g, left, y + 11, wh, hs,
        left + std::max(wg, wh) + 4, y + 14, g, hs);
    y += row;
  }
  return o + "</svg>" + htmlLegend({{"GPU self (work it launched)", "#2b8a3e"}, {"host self", "#1971c2"}});
}

std::string operatorTable(const OperatorSummary& s, double steps) {
  std::string o =
      "<div class=wrap><table id=operators class=sortable><tr><th>operator</th><th>calls</th><th>host self ms</th>"
      "<th>host total ms</th><th>GPU self ms</th><th>GPU total ms</th><th>GPU work items</th></tr>";
  auto cell = [&](int64_t ns) { return fmt::format("<td data-v={}>{:.3f}</td>", ns, htmlMs(ns / steps)); };
  for (const auto& p : s.ops)
    o += fmt::format("<tr><td class=name>{}</td><td data-v={}>{:.3g}</td>{}{}{}{}<td data-v={}>{:.3g}</td></tr>",
                     htmlEscape(p.name), p.calls, static_cast<double>(p.calls) / steps, cell(p.host_self_ns),
                     cell(p.host_total_ns), cell(p.gpu_self_ns), cell(p.gpu_total_ns), p.gpu_work,
                     static_cast<double>(p.gpu_work) / steps);
  return o + "</table></div>";
}

}  // namespace

std::string operatorsHtml(const RunAnalysis& run) {
  std::vector<RankWindows> ranks;
  for (const auto& r : run.ranks) ranks.push_back({&r.index, &r.windows});
  const OperatorSummary s = summarizeOperators(ranks, kMaxOperators);
  std::string o =
      fmt::format("<h2>Operators ({}, mean per step)</h2>",
                  run.ranks.size() == 1 ? std::string("one rank") : fmt::format("all {} ranks", run.ranks.size()));
  if (s.ops.empty())
    return o +
           "<p id=operators-none>No framework operators in the steps: this source records none (a trace from "
           "gpudoctor record, or a profiler run without CPU activity).</p>";
  const double steps = std::max<double>(1, static_cast<double>(s.steps));
  o += "<p>Host self: an operator's own time on the host, less the operators it calls; host total: with them. GPU "
       "self: the kernels, copies and memsets the operator launched itself (linked by the trace's External id); GPU "
       "total: with those of the operators it calls. Click a heading to sort.</p>";
  o += operatorChart(s, steps) + operatorTable(s, steps);
  o += fmt::format("<p><small>{} of {} operators shown: by turns the next costliest on the GPU and on the host",
                   s.ops.size(), s.distinct);
  if (s.gpu_ns > 0)
    o += fmt::format("; GPU work no operator launched: {:.3f} ms/step ({:.1f}% of the GPU work)",
                     htmlMs(s.gpu_unattributed_ns / steps),
                     100.0 * static_cast<double>(s.gpu_unattributed_ns) / static_cast<double>(s.gpu_ns));
  return o + ".</small></p>";
}

}  // namespace gpudoctor
