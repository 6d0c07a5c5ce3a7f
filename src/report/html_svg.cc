// Chart helpers the HTML page's sections share: axes, legends, the step parts, the shown ranks and
// the menus that switch between per-rank views.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "report/html_parts.h"

namespace gpudoctor {

const HtmlPart kStepParts[kStepPartCount] = {
    {"compute", "#2b8a3e"},    {"exposed NCCL", "#e8590c"},     {"copies", "#1971c2"},     {"idle: host", "#c92a2a"},
    {"idle: sync", "#862e9c"}, {"idle: dependency", "#868e96"}, {"idle: other", "#ced4da"}};

std::array<int64_t, kStepPartCount> stepPartValues(const StepBreakdown& b) {
  return {b.compute_ns,   b.comm_exposed_ns,    b.copy_exposed_ns, b.idle_host_ns,
          b.idle_sync_ns, b.idle_dependency_ns, b.idle_other_ns};
}

std::string htmlLegend(const std::vector<std::pair<std::string, std::string>>& items, bool lines) {
  std::string o = "<div class=legend>";
  for (const auto& [name, color] : items)
    o += lines ? fmt::format("<span><i class=ln style='border-top:{}'></i>{}</span>", color, htmlEscape(name))
               : fmt::format("<span><i style='background:{}'></i>{}</span>", color, htmlEscape(name));
  return o + "</div>";
}

std::string stepPartsLegend() {
  std::vector<std::pair<std::string, std::string>> items;
  for (const auto& p : kStepParts) items.emplace_back(p.name, p.color);
  return htmlLegend(items);
}

double tickStep(double max) {
  if (!(max > 0)) return 1;
  double step = std::pow(10.0, std::floor(std::log10(max / 5)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (max / (step * m) <= 8) return step * m;
  return step * 10;
}

std::string tickLabel(double v, double step) {
  int digits = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step)));
  return fmt::format("{:.{}f}", v, std::min(digits, 6));
}

std::string xAxis(double x0, double width, double max, int y, int grid_top, const char* unit) {
  std::string o;
  if (!(max > 0)) return o;
  double step = tickStep(max);
  for (double v = 0; v <= max * (1 + 1e-9); v += step) {
    double x = x0 + v / max * width;
    o += fmt::format(
        "<line x1={0:.1f} x2={0:.1f} y1={1} y2={2} class='grid'/><text x={0:.1f} y={3} class=tick "
        "text-anchor=middle>{4}</text>",
        x, grid_top, y, y + 12, tickLabel(v, step));
  }
  o += fmt::format("<text x={:.1f} y={} class=tick>{}</text>", x0 + width + 6, y + 12, unit);
  return o;
}

std::string yAxis(double left, double right, double top, double height, double max, const char* unit) {
  std::string o;
  if (!(max > 0)) return o;
  double step = tickStep(max);
  for (double v = 0; v <= max * (1 + 1e-9); v += step) {
    double y = top + height * (1 - v / max);
    o += fmt::format(
        "<line x1={0} x2={1} y1={2:.1f} y2={2:.1f} class='grid'/><text x={3} y={4:.1f} class=tick "
        "text-anchor=end>{5}</text>",
        left, right, y, left - 4, y + 4, tickLabel(v, step));
  }
  o += fmt::format("<text x={} y={} class=tick text-anchor=end>{}</text>", left - 4, std::max(10.0, top - 10), unit);
  return o;
}

std::string stepLabel(const StepWindow& w) { return w.annotated ? fmt::format("#{}", w.number) : "all"; }

std::vector<size_t> shownRanks(const RunAnalysis& run) {
  std::vector<size_t> pick;
  auto add = [&](size_t i) {
    if (i < run.ranks.size() && std::find(pick.begin(), pick.end(), i) == pick.end() && pick.size() < 8)
      pick.push_back(i);
  };
  auto mean = [&](size_t i) { return run.ranks[i].total.wall_ns / std::max<double>(1, run.ranks[i].steps.size()); };
  add(0);
  for (size_t i = 0; i < run.ranks.size(); ++i)
    if (run.ranks[i].trace->rank == run.straggler.straggler) add(i);
  size_t slow = 0, fast = 0;
  for (size_t i = 0; i < run.ranks.size(); ++i) {
    if (mean(i) > mean(slow)) slow = i;
    if (mean(i) < mean(fast)) fast = i;
  }
  add(slow);
  add(fast);
  for (size_t i = 0; i < run.ranks.size(); ++i) add(i);
  std::sort(pick.begin(), pick.end());
  return pick;
}

std::string pickMenu(const std::string& id, const std::string& group,
                     const std::vector<std::pair<std::string, std::string>>& options) {
  std::string o = fmt::format("<select id={} class=pick data-group={}>", id, group);
  for (const auto& [value, text] : options) o += fmt::format("<option value='{}'>{}</option>", value, htmlEscape(text));
  return o + "</select>";
}

}  // namespace gpudoctor
