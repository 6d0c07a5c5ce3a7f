// The page's host side (what TensorBoard's overview split out of the step): the DataLoader, the
// optimizer step, blocking syncs, the host's own work, launch latency and copies, per shown rank,
// from the same breakdowns as the terminal's "Host side of rank" block; and the job's host syncs.
#include <fmt/format.h>

#include "report/html_parts.h"

namespace gpudoctor {

namespace {

std::string bytesHtml(double b) {
  if (b >= (1LL << 30)) return fmt::format("{:.2f} GiB", b / (1LL << 30));
  if (b >= (1LL << 20)) return fmt::format("{:.2f} MiB", b / (1LL << 20));
  if (b >= (1LL << 10)) return fmt::format("{:.1f} KiB", b / (1LL << 10));
  return fmt::format("{:.0f} B", b);
}

std::string hostTable(const RunAnalysis& run, const std::vector<size_t>& shown) {
  std::string o =
      "<div class=wrap><table id=host-side><tr><th>rank</th><th>steps</th><th>DataLoader next() ms</th>"
      "<th>GPU idle while loading ms</th><th>optimizer step ms</th><th>blocking syncs ms</th>"
      "<th>host's own work ms</th><th>launches</th><th>launch latency p50 / p95 / max us</th></tr>";
  for (size_t i : shown) {
    const RankAnalysis& r = run.ranks[i];
    const double n = std::max<double>(1, r.steps.size());
    const StepBreakdown& t = r.total;
    const DurationStats& l = t.launch_latency;
    o += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{:.3f}</td><td>{:.3f}</td><td>{:.3f}</td><td>{:.3f}</td><td>{:.3f}</td>"
        "<td>{:.0f}</td><td>{}</td></tr>",
        r.trace->rank, r.steps.size(), htmlMs(t.dataloader_ns / n), htmlMs(t.idle_in_loader_ns / n),
        htmlMs(t.optimizer_ns / n), htmlMs(t.sync_ns / n), htmlMs(r.host_work.per_step_ns),
        static_cast<double>(l.count) / n,
        l.count ? fmt::format("{:.1f} / {:.1f} / {:.1f}", l.p50_ns / 1e3, l.p95_ns / 1e3, l.max_ns / 1e3)
                : std::string("&mdash;"));
  }
  return o + "</table></div>";
}

std::string copiesTable(const RunAnalysis& run, const std::vector<size_t>& shown) {
  std::string rows;
  for (size_t i : shown) {
    const RankAnalysis& r = run.ranks[i];
    const double n = std::max<double>(1, r.steps.size());
    const StepBreakdown& t = r.total;
    for (int d = 0; d < kCopyDirCount; ++d) {
      const CopyStats& c = t.copies[d];
      if (c.count == 0) continue;
      std::string kind(copyDirName(static_cast<CopyDir>(d)));
      if (static_cast<CopyDir>(d) == CopyDir::kHtoD && (t.pageable_htod.count || t.pinned_htod.count))
        kind += fmt::format(" ({:.3g} pageable, {:.3g} pinned)", t.pageable_htod.count / n, t.pinned_htod.count / n);
      if (static_cast<CopyDir>(d) == CopyDir::kDtoH && (t.pageable_dtoh.count || t.pinned_dtoh.count))
        kind += fmt::format(" ({:.3g} pageable, {:.3g} pinned)", t.pageable_dtoh.count / n, t.pinned_dtoh.count / n);
      rows += fmt::format("<tr><td>{}</td><td>{}</td><td>{:.3g}</td><td>{}</td><td>{:.3f}</td></tr>", r.trace->rank,
                          kind, static_cast<double>(c.count) / n, bytesHtml(static_cast<double>(c.bytes) / n),
                          htmlMs(c.dur_ns / n));
    }
  }
  if (rows.empty()) return "<p id=copies>No copies or memsets in the steps.</p>";
  return "<h3>Copies and memsets (mean per step)</h3><div class=wrap><table id=copies><tr><th>rank</th><th>kind</th>"
         "<th>count</th><th>bytes</th><th>ms</th></tr>" +
         rows + "</table></div>";
}

std::string hostSyncsTable(const JobProfile& p) {
  if (p.host_syncs.empty()) return "<p id=host-syncs-none>No host syncs in the steps.</p>";
  std::string o =
      "<h3 id=host-syncs-heading>Host syncs (calls that block the host until the GPU catches up)</h3>"
      "<div class=wrap><table id=host-syncs><tr><th>operator</th><th>blocking call</th><th>caller</th><th>copy</th>"
      "<th>per step</th><th>host ms/step</th><th>wait ms/step</th></tr>";
  for (const auto& h : p.host_syncs)
    o += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3g}</td><td>{:.3f}</td><td>{:.3f}</td></tr>",
        h.op.empty() ? "(none)" : htmlEscape(h.op), htmlEscape(h.call),
        h.caller.empty() ? "(step)" : htmlEscape(h.caller), h.copy.empty() ? "&mdash;" : htmlEscape(h.copy),
        h.count_per_step, htmlMs(h.host_ns_per_step), htmlMs(h.wait_ns_per_step));
  return o + "</table></div>";
}

}  // namespace

std::string hostSideHtml(const RunAnalysis& run) {
  const std::vector<size_t> shown = shownRanks(run);
  std::string o =
      "<h2>Host side (mean per step)</h2><p>What the host does in a step besides launching: fetching the next batch "
      "(DataLoader next()), the optimizer step, calls that block until the GPU catches up, and stretches of its own "
      "work that launch nothing (Python, logging); the launch latency is from the end of a launch call to the GPU "
      "starting the work.</p>";
  o += hostTable(run, shown) + copiesTable(run, shown) + hostSyncsTable(run.job);
  if (shown.size() < run.ranks.size())
    o += fmt::format(
        "<p><small>{} of {} ranks shown (rank 0, the straggler, the slowest and fastest); --json has them "
        "all.</small></p>",
        shown.size(), run.ranks.size());
  return o;
}

}  // namespace gpudoctor
