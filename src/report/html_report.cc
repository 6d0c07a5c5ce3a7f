#include "report/html_report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "diagnosis/what_if.h"
#include "report/html_parts.h"

namespace gpudoctor {

namespace {

// Per-rank stacked bars of the mean step.
std::string rankChart(const RunAnalysis& run) {
  const int W = 900, row = 26, left = 70;
  int h = static_cast<int>(run.ranks.size()) * row + 30;
  double max_ms = 0;
  for (const auto& r : run.ranks)
    max_ms = std::max(max_ms, htmlMs(r.total.wall_ns / std::max<double>(1, r.steps.size())));
  std::string o =
      fmt::format("<svg id='chart-ranks' class=chart viewBox='0 0 {0} {1}' width={0} height={1} role=img>", W, h);
  o += xAxis(left, W - left - 80, max_ms, h - 24, 0, "ms");
  int y = 5;
  for (const auto& r : run.ranks) {
    double n = std::max<double>(1, r.steps.size());
    const auto& t = r.total;
    const auto parts = stepPartValues(t);
    double v[kStepPartCount];
    for (int i = 0; i < kStepPartCount; ++i) v[i] = htmlMs(static_cast<double>(parts[i]) / n);
    o += fmt::format("<text x=0 y={} class=lbl>rank {}</text>", y + 16, r.trace->rank);
    double x = left;
    for (int i = 0; i < kStepPartCount; ++i) {
      double w = max_ms > 0 ? v[i] / max_ms * (W - left - 80) : 0;
      if (w > 0)
        o += fmt::format("<rect x={:.1f} y={} width={:.1f} height={} fill='{}'><title>{}: {:.3f} ms</title></rect>", x,
                         y, w, row - 6, kStepParts[i].color, kStepParts[i].name, v[i]);
      x += w;
    }
    o += fmt::format("<text x={:.1f} y={} class=lbl>{:.2f} ms</text>", x + 4, y + 16, htmlMs(t.wall_ns / n));
    y += row;
  }
  return o + "</svg>" + stepPartsLegend();
}

// One step of one rank: lanes of compute, NCCL, copies, DataLoader and syncs.
std::string timeline(const RankAnalysis& r, size_t step, const std::string& id, bool shown) {
  const auto& w = r.windows[step];
  const int W = 900, left = 90, lane = 22;
  struct Lane {
    const char* name;
    const IntervalSet* set;
    const char* color;
  };
  const Lane lanes[] = {{"compute", &r.index.compute, "#2b8a3e"},
                        {"NCCL", &r.index.nccl, "#e8590c"},
                        {"copies", &r.index.mem, "#1971c2"},
                        {"DataLoader", &r.index.dataloader, "#f08c00"},
                        {"host sync", &r.index.host_sync, "#862e9c"}};
  double span = std::max<double>(1, w.length());
  std::string o = fmt::format(
      "<svg id='{}' data-group=timeline class='chart tl' viewBox='0 0 {} {}' width={} height={} role=img{}>", id, W,
      5 * lane + 30, W, 5 * lane + 30, shown ? "" : " style='display:none'");
  int y = 5;
  for (const auto& l : lanes) {
    o += fmt::format("<text x=0 y={} class=lbl>{}</text>", y + 14, l.name);
    IntervalSet s = l.set->clip(w.begin_ns, w.end_ns);
    // At most ~1500 rectangles per lane: spans closer than one pixel are drawn together.
    double px_ns = span / (W - left);
    double cur_b = -1, cur_e = -1;
    auto flush = [&] {
      if (cur_b < 0) return;
      double x = left + (cur_b - w.begin_ns) / px_ns, wd = std::max(0.5, (cur_e - cur_b) / px_ns);
      o += fmt::format("<rect x={:.1f} y={} width={:.1f} height={} fill='{}'/>", x, y, wd, lane - 6, l.color);
    };
    for (const auto& sp : s.spans()) {
      if (cur_b >= 0 && sp.begin - cur_e < px_ns) {
        cur_e = sp.end;
        continue;
      }
      flush();
      cur_b = sp.begin;
      cur_e = sp.end;
    }
    flush();
    y += lane;
  }
  o += xAxis(left, W - left - 30, htmlMs(span), y, 0, "ms");
  return o + "</svg>";
}

// The timelines the report carries: of each shown rank (shownRanks), its median and its slowest
// step. The first is shown; a menu switches between them.
std::string timelines(const RunAnalysis& run) {
  std::vector<std::pair<std::string, std::string>> menu;
  std::string svgs;
  for (size_t i : shownRanks(run)) {
    const RankAnalysis& r = run.ranks[i];
    if (r.steps.empty() || r.windows.size() != r.steps.size()) continue;
    std::vector<size_t> order(r.steps.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return r.steps[a].wall_ns < r.steps[b].wall_ns; });
    std::vector<std::pair<size_t, const char*>> steps = {{order[(order.size() - 1) / 2], "median"}};
    if (order.back() != steps[0].first) steps.push_back({order.back(), "slowest"});
    for (auto [k, what] : steps) {
      std::string id = fmt::format("tl-{}-{}", r.trace->rank, k);
      menu.emplace_back(id, fmt::format("rank {}, step {} ({} step, {:.2f} ms)", r.trace->rank, stepLabel(r.windows[k]),
                                        what, htmlMs(r.steps[k].wall_ns)));
      svgs += timeline(r, k, id, svgs.empty());
    }
  }
  return "<p>" + pickMenu("timeline-pick", "timeline", menu) + "</p><div id=chart-timeline>" + svgs + "</div>";
}

// One row per rank: the mean step's parts and, where the ranks' collectives were matched, how
// long it waited for others and how often it arrived last.
std::string rankTable(const RunAnalysis& run) {
  std::string o =
      "<div class=wrap><table id=ranks><tr><th>rank</th><th>steps</th><th>step ms</th><th>GPU busy</th>"
      "<th>compute ms</th><th>exposed NCCL ms</th><th>copies ms</th><th>idle: host ms</th><th>idle: sync ms</th>"
      "<th>waits for others ms/step</th><th>arrives last</th></tr>";
  for (const auto& r : run.ranks) {
    double n = std::max<double>(1, r.steps.size());
    const auto& t = r.total;
    const RankWait* w = nullptr;
    for (const auto& x : run.straggler.ranks)
      if (x.rank == r.trace->rank) w = &x;
    o += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{:.2f}</td><td>{:.0f}%</td><td>{:.2f}</td><td>{:.2f}</td><td>{:.2f}</td>"
        "<td>{:.2f}</td><td>{:.2f}</td><td>{}</td><td>{}</td></tr>",
        r.trace->rank, r.steps.size(), htmlMs(t.wall_ns / n), t.wall_ns > 0 ? 100.0 * t.gpu_busy_ns / t.wall_ns : 0,
        htmlMs(t.compute_ns / n), htmlMs(t.comm_exposed_ns / n), htmlMs(t.copy_exposed_ns / n),
        htmlMs(t.idle_host_ns / n), htmlMs(t.idle_sync_ns / n),
        w ? fmt::format("{:.2f}", htmlMs(w->wait_ns / n)) : std::string("&mdash;"),
        w ? fmt::format("{} of {}", w->last_arrivals, run.straggler.collectives) : std::string("&mdash;"));
  }
  return o + "</table></div>";
}

// Who holds the others back: the straggler verdict in words and the ranks' waits.
std::string stragglerSection(const RunAnalysis& run) {
  const StragglerReport& s = run.straggler;
  if (run.ranks.size() < 2) return {};
  std::string o = "<h2>Straggler</h2><p id=straggler>";
  std::string note = s.note;
  if (!note.empty()) note[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(note[0])));
  o += htmlEscape(note.empty() ? std::string("No rank holds the others back consistently") : note);
  const double steps = std::max<double>(1, run.ranks.front().steps.size());
  if (s.straggler >= 0 && note.find("per step") == std::string::npos)
    o += fmt::format(
        ": they wait {:.2f} ms per step for rank {} inside NCCL (mean over them; per rank in the table above)",
        htmlMs(s.others_wait_ns / steps), s.straggler);
  return o + ".</p>";
}

std::string classChart(const KernelSummary& k) {
  const int W = 900, left = 170, row = 20;
  std::string o =
      fmt::format("<svg id='chart-classes' class=chart viewBox='0 0 {0} {1}' width={0} height={1} role=img>", W,
                  static_cast<int>(k.classes.size()) * row + 10);
  int y = 4;
  for (const auto& c : k.classes) {
    double wd = c.share * (W - left - 120);
    o += fmt::format(
        "<text x=0 y={} class=lbl>{}</text><rect x={} y={} width={:.1f} height={} fill='#495057'/>"
        "<text x={:.1f} y={} class=lbl>{:.1f}% ({:.2f} ms, {} kernels)</text>",
        y + 13, kernelClassName(c.cls), left, y, wd, row - 5, left + wd + 4, y + 13, 100 * c.share,
        htmlMs(static_cast<double>(c.dur.total_ns)), c.dur.count);
    y += row;
  }
  return o + "</svg>";
}

// Bus bandwidth of each collective (kind, dtype, size). Collectives whose size the trace does not
// give (no "In msg nelems" on the kernel) have no bandwidth: a note names them instead of a bar.
std::string collectiveChart(const std::vector<CollectiveStats>& all) {
  std::vector<const CollectiveStats*> cs;
  std::string unsized;
  for (const auto& c : all) {
    if (c.bytes > 0) {
      cs.push_back(&c);
      continue;
    }
    unsized +=
        fmt::format("{}{} {} kernel{} ({:.2f} ms mean)", unsized.empty() ? "" : "; ", c.dur.count,
                    c.collective.empty() ? "NCCL" : c.collective, c.dur.count == 1 ? "" : "s", c.dur.mean_ns / 1e6);
  }
  std::string note = unsized.empty()
                         ? ""
                         : "<p id=collectives-unsized><small>Left out, their message size not being in the trace (no "
                           "&ldquo;In msg nelems&rdquo; on the kernel), so no bandwidth: " +
                               htmlEscape(unsized) + ".</small></p>";
  if (cs.empty()) return note;
  // Labels as long as they need (about 6.6 px a character at 12 px), at most 44 characters; the
  // full label in the bar's tooltip.
  constexpr size_t kMaxLabel = 44;
  std::vector<std::string> labels;
  size_t longest = 0;
  for (const auto* c : cs) {
    std::string l = fmt::format("{} {} {:.2f} MiB x{}", c->collective, c->dtype,
                                static_cast<double>(c->bytes) / (1 << 20), c->dur.count);
    longest = std::max(longest, std::min(l.size(), kMaxLabel));
    labels.push_back(l);
  }
  const int W = 900, row = 20, left = static_cast<int>(longest * 6.6) + 10;
  double mx = 0;
  for (const auto* c : cs) mx = std::max(mx, c->busbw_gbps);
  std::string o =
      fmt::format("<svg id='chart-collectives' class=chart viewBox='0 0 {0} {1}' width={0} height={1} role=img>", W,
                  static_cast<int>(cs.size()) * row + 10);
  int y = 4;
  for (size_t i = 0; i < cs.size(); ++i) {
    const auto& c = *cs[i];
    std::string shown = labels[i].size() > kMaxLabel ? labels[i].substr(0, kMaxLabel - 3) + "..." : labels[i];
    double wd = mx > 0 ? c.busbw_gbps / mx * (W - left - 240) : 0;
    o += fmt::format(
        "<text x=0 y={} class=lbl>{}<title>{}</title></text><rect x={} y={} width={:.1f} height={} "
        "fill='#e8590c'><title>{}</title></rect><text x={:.1f} y={} class=lbl>busbw {:.2f} GB/s, mean {:.1f} us</text>",
        y + 13, htmlEscape(shown), htmlEscape(labels[i]), left, y, wd, row - 5, htmlEscape(labels[i]), left + wd + 4,
        y + 13, c.busbw_gbps, c.dur.mean_ns / 1e3);
    y += row;
  }
  return o + "</svg>" + note;
}

std::string yesNo(const std::optional<bool>& b) { return b ? (*b ? "yes" : "no") : "unknown"; }
std::string orUnknown(const std::string& s) { return s.empty() ? "unknown" : s; }

// What the job already does: one row per profile field, its host syncs, and what the trace could not tell.
std::string jobSection(const JobProfile& p) {
  std::string o = "<h2>Job (from the trace)</h2><table id=job>";
  auto row = [&](const std::string& k, const std::string& v) {
    o += "<tr><th>" + htmlEscape(k) + "</th><td>" + htmlEscape(v) + "</td></tr>";
  };
  row("framework", orUnknown(p.framework) + (p.framework_version.empty() ? "" : " " + p.framework_version));
  const auto& s = p.precision_shares;
  row("precision", fmt::format("{} (GEMM/conv/attention time: fp32 {:.0f}%, tf32 {:.0f}%, bf16 {:.0f}%, fp16 {:.0f}%, "
                               "fp8 {:.0f}%, unknown {:.0f}%)",
                               orUnknown(p.precision), 100 * s.fp32, 100 * s.tf32, 100 * s.bf16, 100 * s.fp16,
                               100 * s.fp8, 100 * s.unknown));
  row("autocast", yesNo(p.autocast));
  row("grad scaler", p.grad_scaler ? "yes" : "no");
  row("gradient accumulation", p.grad_accumulation_steps
                                   ? fmt::format("{} backward pass{} per optimizer step", *p.grad_accumulation_steps,
                                                 *p.grad_accumulation_steps == 1 ? "" : "es")
                                   : std::string("unknown"));
  row("data parallelism", orUnknown(p.data_parallel) +
                              (p.ranks ? fmt::format(", {} rank{}", *p.ranks, *p.ranks == 1 ? "" : "s") : "") +
                              (p.data_parallel_basis.empty() ? "" : " (" + p.data_parallel_basis + ")"));
  row("torch.compile", p.torch_compile ? "yes" : "no");
  row("CUDA graphs", p.cuda_graphs ? "yes" : "no");
  row("activation checkpointing",
      yesNo(p.activation_checkpointing) +
          (p.recompute_share && *p.recompute_share > 0
               ? fmt::format(", {:.0f}% of forward GPU time recomputed", 100 * *p.recompute_share)
               : ""));
  row("optimizer",
      p.notInSource("optimizer")
          ? std::string("not recorded (no framework operators in this source)")
          : orUnknown(p.optimizer) + ", " + orUnknown(p.optimizer_impl) +
                (p.optimizer_impl.empty() ? ""
                                          : fmt::format(", {:.0f} launches per step", p.optimizer_launches_per_step)) +
                (p.param_tensors > 0 ? fmt::format(", {:.0f} parameter tensors", p.param_tensors) : ""));
  row("DataLoader", p.notInSource("dataloader") ? std::string("not recorded (no framework operators in this source)")
                    : !p.dataloader             ? std::string("none recorded")
                    : p.loader_workers == 0     ? std::string("0 workers (loads in the training process)")
                                                : std::string("worker processes (number not in the trace)"));
  row("host-to-device copies", p.pin_memory ? (*p.pin_memory ? "pinned" : "pageable") : "none");
  o += "</table>";
  if (!p.notes.empty()) {
    o += "<ul id=job-notes>";
    for (const auto& n : p.notes) o += "<li>" + htmlEscape(n) + "</li>";
    o += "</ul>";
  }
  return o;
}

// The findings: severity, title, gain, evidence, explanation, fix, the replay's prediction.
std::string findingsHtml(const Diagnosis& d) {
  std::string o = "<h2>Findings</h2><div id=findings>";
  for (const auto& f : d.findings) {
    o += fmt::format("<div class='f {}'><b>[{}] {}</b>", severityName(f.severity), severityName(f.severity),
                     htmlEscape(f.title));
    if (f.gain_ms_per_step > 0)
      o += fmt::format(" &mdash; saves {} {:.2f} ms/step ({:.0f}%{}{})", f.gain_is_estimate ? "about" : "&le;",
                       f.gain_ms_per_step, 100 * f.gain_share, f.gain_is_estimate ? ", not a bound" : "",
                       f.floor_step_ms > 0 ? fmt::format("; the step stays &ge; {:.2f} ms", f.floor_step_ms) : "");
    o += "<ul>";
    for (const auto& e : f.evidence)
      o += fmt::format("<li>{}: {:.4g} {}</li>", htmlEscape(e.name), e.value, htmlEscape(e.unit));
    o += "</ul>";
    if (!f.explanation.empty()) o += "<p>" + htmlEscape(f.explanation) + "</p>";
    if (!f.fix.empty()) {
      o += "<pre>";
      for (const auto& l : f.fix) o += htmlEscape(l) + "\n";
      o += "</pre>";
    }
    if (f.gain_ms_per_step > 0) o += "<p><small>Gain estimate: " + htmlEscape(f.gain_basis) + "</small></p>";
    if (f.what_if.available) {
      o += fmt::format("<p class=predicted>Predicted by replay: {:.2f} ms/step un-profiled after this fix, {:.2f}x",
                       htmlMs(static_cast<double>(f.what_if.step_ns)), f.what_if.speedup);
      if (!f.what_if.next_bottleneck.empty()) o += ", then limited by " + htmlEscape(f.what_if.next_bottleneck);
      o += "<br><small>" + htmlEscape(f.what_if.basis) + "</small></p>";
    }
    o += "</div>";
  }
  return o + "</div>";
}

// The plan: the fixes one after another, each with its predicted step and the fixes as good.
std::string planHtml(const Diagnosis& d) {
  if (d.plan.empty()) return "";
  std::string o = "<h2>Plan (fixes applied one after another, predicted by replay";
  if (d.what_if.available)
    o += fmt::format("; un-profiled step {:.2f} ms{}", htmlMs(static_cast<double>(d.what_if.unprofiled_step_ns)),
                     d.what_if.anchored ? fmt::format(", matched to the measured {:.2f} ms",
                                                      htmlMs(static_cast<double>(d.what_if.measured_step_ns)))
                                        : "");
  o += ")</h2><table id=plan><tr><th>step</th><th>fix</th><th>finding</th><th>predicted ms/step</th><th>speedup</th>"
       "<th>then limited by</th><th>as good within the replay's accuracy (" +
       fmt::format("{:.0f} %", 100 * kPlanTieShare) + ")</th></tr>";
  int n = 0;
  for (const auto& p : d.plan) {
    std::string tied;
    for (const auto& a : p.within_accuracy)
      tied += fmt::format("{}{} {:.2f}x", tied.empty() ? "" : ", ", htmlEscape(a.fix.empty() ? a.finding : a.fix),
                          a.speedup);
    o += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.2f}</td><td>{:.2f}x</td><td>{}</td><td>{}</td></tr>",
                     ++n, htmlEscape(p.fix), htmlEscape(p.finding), htmlMs(static_cast<double>(p.step_ns)), p.speedup,
                     p.next_bottleneck.empty() ? "&mdash;" : htmlEscape(p.next_bottleneck),
                     tied.empty() ? "&mdash;" : tied);
  }
  return o + "</table>";
}

std::string checklistHtml(const Diagnosis& d) {
  std::string o =
      "<h2>Checklist</h2><table id=checklist><tr><th>area</th><th>item</th><th>status</th><th>evidence</th></tr>";
  for (const auto& c : d.checklist)
    o += fmt::format("<tr><td>{}</td><td>{}</td><td class={}>{}</td><td>{}</td></tr>", htmlEscape(c.area),
                     htmlEscape(c.item),
                     c.status == CheckStatus::kPass   ? "pass"
                     : c.status == CheckStatus::kFail ? "fail"
                                                      : "na",
                     checkStatusName(c.status), htmlEscape(c.evidence));
  return o + "</table>";
}

std::string topKernelsHtml(const KernelSummary& k) {
  std::string o =
      "<h2>Top kernels</h2><div class=wrap><table id=kernels><tr><th>kernel</th><th>class</th><th>count</th>"
      "<th>total ms</th><th>share</th></tr>";
  for (const auto& t : k.top)
    o += fmt::format("<tr><td class=name>{}</td><td>{}</td><td>{}</td><td>{:.3f}</td><td>{:.1f}%</td></tr>",
                     htmlEscape(t.name.substr(0, 300)), kernelClassName(t.cls), t.dur.count,
                     htmlMs(static_cast<double>(t.dur.total_ns)), 100 * t.share);
  return o + "</table></div>";
}

// The page's title line: the run's, or in the streaming mode the job's with the ranks analyzed in full.
std::string titleHtml(const RunAnalysis& run, const Diagnosis& d, const HtmlFleet& fl) {
  if (!fl.focus || !fl.fleet)
    return fmt::format("<h1>gpudoctor: {} rank{}, mean step {:.2f} ms, primary bottleneck: {}</h1>", run.ranks.size(),
                       run.ranks.size() == 1 ? "" : "s", d.step_ms, htmlEscape(d.primary));
  std::vector<int> ids;
  for (const auto& r : run.ranks) ids.push_back(r.trace->rank);
  return fmt::format(
      "<h1>gpudoctor: {} ranks, mean step {:.2f} ms; {} {} analyzed in full, primary bottleneck: {}</h1>",
      fl.fleet->ranks, htmlMs(fl.fleet->step_ns), ids.size() == 1 ? "rank" : "ranks", fmt::join(ids, ", "),
      htmlEscape(d.primary));
}

}  // namespace

std::string renderHtml(const RunAnalysis& run, const Diagnosis& d, const HtmlFleet& fl) {
  std::string o = htmlPageStart() + titleHtml(run, d, fl);
  if (fl.focus) o += focusHtml(*fl.focus);
  if (!run.notes.empty()) {
    o += "<ul id=trace-notes>";
    for (const auto& n : run.notes) o += "<li>" + htmlEscape(n) + "</li>";
    o += "</ul>";
  }
  o += jobSection(run.job) + findingsHtml(d) + planHtml(d);
  if (fl.fleet) o += fleetHtml(*fl.fleet);
  o += "<h2>Per-rank step breakdown (mean per step)</h2>" + rankChart(run) + rankTable(run);
  o += stragglerSection(run);
  o += stepsHtml(run);
  o += "<h2>Timeline of one step</h2>" + timelines(run);
  o += hostSideHtml(run) + operatorsHtml(run) + memoryHtml(run);
  o += "<h2>Kernel classes (share of summed kernel time)</h2>" + classChart(run.kernels);
  if (!run.collectives.empty()) o += "<h2>Collectives (bus bandwidth)</h2>" + collectiveChart(run.collectives);
  return o + checklistHtml(d) + topKernelsHtml(run.kernels) + htmlPageEnd();
}

}  // namespace gpudoctor
