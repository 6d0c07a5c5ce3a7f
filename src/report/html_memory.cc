// The page's memory view (the TensorBoard plugin's "Memory" page): the CUDA caching allocator's
// allocated bytes over the steps of each shown rank, from the trace's [memory] events
// (profile_memory=True), with each rank's peak against its device's memory; a note where the traces
// have no such events.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "report/html_parts.h"

namespace gpudoctor {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

struct MemoryLine {
  const RankAnalysis* rank = nullptr;
  int64_t begin_ns = 0, end_ns = 0;  // the rank's first step's start and last step's end
  int64_t peak_bytes = 0;            // largest allocated in the steps (the value carried in included)
};

// The value allocated at t (the last sample at or before it), -1 when none.
int64_t valueAt(const std::vector<GpuMemorySample>& s, int64_t t) {
  auto it = std::upper_bound(s.begin(), s.end(), t, [](int64_t v, const GpuMemorySample& x) { return v < x.t_ns; });
  return it == s.begin() ? -1 : std::prev(it)->allocated_bytes;
}

std::vector<MemoryLine> linesOf(const RunAnalysis& run) {
  std::vector<MemoryLine> lines;
  for (size_t i : shownRanks(run)) {
    const RankAnalysis& r = run.ranks[i];
    const auto& s = r.trace->gpu_memory.samples();
    if (s.empty() || r.windows.empty()) continue;
    MemoryLine l{&r, r.windows.front().begin_ns, r.windows.back().end_ns,
                 std::max<int64_t>(0, valueAt(s, r.windows.front().begin_ns))};
    for (const auto& x : s)
      if (x.t_ns >= l.begin_ns && x.t_ns < l.end_ns) l.peak_bytes = std::max(l.peak_bytes, x.allocated_bytes);
    lines.push_back(l);
  }
  return lines;
}

// One polyline: per pixel column the largest value allocated in it, carried across empty columns.
std::string polyline(const MemoryLine& l, double left, double pw, double top, double ph, double span_ns, double max_gib,
                     const char* color) {
  const auto& s = l.rank->trace->gpu_memory.samples();
  const int cols = static_cast<int>(pw);
  std::vector<double> col(static_cast<size_t>(cols) + 1, -1);
  for (auto it = std::lower_bound(s.begin(), s.end(), l.begin_ns,
                                  [](const GpuMemorySample&x, int64_t v) { return x.t_ns < v; });
       it != s.end() && it->t_ns < l.end_ns; ++it) {
    auto c = static_cast<size_t>(
        std::clamp((static_cast<double>(it->t_ns - l.begin_ns)) / span_ns * cols, 0.0, static_cast<double>(cols)));
    col[c] = std::max(col[c], static_cast<double>(it->allocated_bytes) / kGiB);
  }
  // Before the first sample in the steps the value is the one carried in, if any sample precedes them.
  double cur = static_cast<double>(valueAt(s, l.begin_ns)) / kGiB;
  const int last =
      static_cast<int>(std::min<double>(cols, static_cast<double>(l.end_ns - l.begin_ns) / span_ns * cols));
  std::string pts;
  for (int c = 0; c <= last; ++c) {
    if (col[static_cast<size_t>(c)] < 0 && c != 0 && c != last) continue;
    if (col[static_cast<size_t>(c)] >= 0) cur = col[static_cast<size_t>(c)];
    if (cur < 0) continue;
    pts += fmt::format("{:.1f},{:.1f} ", left + c, top + ph * (1 - cur / max_gib));
  }
  return fmt::format("<polyline points='{}' fill=none stroke='{}' stroke-width=1.5><title>rank {}</title></polyline>",
                     pts, color, l.rank->trace->rank);
}

std::string memoryChart(const std::vector<MemoryLine>& lines) {
  const int W = 900, H = 250, left = 56, top = 26, bottom = 40;
  const double pw = W - left - 60, ph = H - top - bottom;
  double span = 1, max_gib = 0;
  for (const auto& l : lines)
    span = std::max(span, static_cast<double>(l.end_ns - l.begin_ns)), max_gib = std::max(max_gib, l.peak_bytes / kGiB);
  if (!(max_gib > 0)) max_gib = 1;
  max_gib = tickStep(max_gib) * std::ceil(max_gib * 1.05 / tickStep(max_gib));
  std::string o =
      fmt::format("<svg id='chart-memory' class=chart viewBox='0 0 {0} {1}' width={0} height={1} role=img>", W, H);
  o += yAxis(left, left + pw, top, ph, max_gib, "GiB");
  // The first line's steps: a boundary and its number at each step's start.
  const RankAnalysis& r0 = *lines.front().rank;
  const size_t every = static_cast<size_t>(std::ceil(static_cast<double>(r0.windows.size()) / 16.0));
  for (size_t k = 0; k < r0.windows.size(); k += every) {
    double x = left + static_cast<double>(r0.windows[k].begin_ns - lines.front().begin_ns) / span * pw;
    o += fmt::format(
        "<line x1={0:.1f} x2={0:.1f} y1={1} y2={2:.1f} class='stepline'/><text x={3:.1f} y={4:.1f} "
        "class=tick>{5}</text>",
        x, top, top + ph, x + 2, top + ph + 14, stepLabel(r0.windows[k]));
  }
  o += fmt::format(
      "<text x={:.1f} y={} class=tick text-anchor=middle>time from the first step's start ({:.1f} ms in "
      "all; lines at each step's start)</text>",
      left + pw / 2, H - 6, htmlMs(span));
  static constexpr const char* kColors[] = {"#1971c2", "#e8590c", "#2b8a3e", "#862e9c",
                                            "#c92a2a", "#0c8599", "#f08c00", "#495057"};
  std::vector<std::pair<std::string, std::string>> legend;
  for (size_t i = 0; i < lines.size(); ++i) {
    o += polyline(lines[i], left, pw, top, ph, span, max_gib, kColors[i % 8]);
    legend.emplace_back(fmt::format("rank {}", lines[i].rank->trace->rank),
                        fmt::format("2px solid {}", kColors[i % 8]));
  }
  return o + "</svg>" + htmlLegend(legend, true);
}

std::string memoryTable(const std::vector<MemoryLine>& lines) {
  std::string o =
      "<div class=wrap><table id=memory><tr><th>rank</th><th>device</th><th>device memory</th>"
      "<th>peak allocated in the steps</th><th>of the device</th><th>peak allocated in the trace</th></tr>";
  for (const auto& l : lines) {
    const RankTrace& t = *l.rank->trace;
    const DeviceProps* dev = nullptr;
    for (const auto& d : t.devices)
      if (d.id == t.gpu_memory.device() || dev == nullptr) dev = &d;
    const bool total = dev && dev->total_global_mem > 0;
    o += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.2f} GiB</td><td>{}</td><td>{}</td></tr>", t.rank,
        dev ? htmlEscape(dev->name) : std::string("&mdash;"),
        total ? fmt::format("{:.1f} GiB", dev->total_global_mem / kGiB) : std::string("&mdash;"), l.peak_bytes / kGiB,
        total ? fmt::format("{:.1f}%", 100.0 * l.peak_bytes / dev->total_global_mem) : std::string("&mdash;"),
        t.peak_allocated_bytes >= 0 ? fmt::format("{:.2f} GiB", t.peak_allocated_bytes / kGiB)
                                    : std::string("&mdash;"));
  }
  return o + "</table></div>";
}

}  // namespace

std::string memoryHtml(const RunAnalysis& run) {
  std::string o = "<h2>GPU memory</h2>";
  const std::vector<MemoryLine> lines = linesOf(run);
  if (lines.empty())
    return o +
           "<p id=memory-none>This trace has no memory events, so the page cannot show GPU memory over the "
           "steps. Profile with <code>torch.profiler.profile(..., profile_memory=True)</code> to see it (it adds "
           "host time to every allocation), or watch the device with <code>gpudoctor monitor</code>.</p>";
  o += "<p>Bytes allocated by PyTorch's caching allocator (the [memory] events' Total Allocated), over each rank's "
       "steps. What the allocator has reserved from the device, and what nvidia-smi shows, is more.</p>";
  return o + memoryChart(lines) + memoryTable(lines);
}

}  // namespace gpudoctor
