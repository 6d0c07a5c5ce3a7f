#include "report/html_report.h"

#include <algorithm>

#include <fmt/format.h>

namespace gpudoctor {

namespace {

std::string esc(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

double ms(double ns) { return ns / 1e6; }

struct Part {
  const char* name;
  const char* color;
};
constexpr Part kParts[] = {{"compute", "#2b8a3e"},   {"exposed NCCL", "#e8590c"}, {"copies", "#1971c2"},
                           {"idle: host", "#c92a2a"}, {"idle: sync", "#862e9c"},  {"idle: dependency", "#868e96"},
                           {"idle: other", "#ced4da"}};

std::string legend() {
  std::string o = "<div class=legend>";
  for (const auto& p : kParts) o += fmt::format("<span><i style='background:{}'></i>{}</span>", p.color, p.name);
  return o + "</div>";
}

// Per-rank stacked bars of the mean step.
std::string rankChart(const RunAnalysis& run) {
  const int W = 900, row = 26, left = 70;
  int h = static_cast<int>(run.ranks.size()) * row + 30;
  double max_ms = 0;
  for (const auto& r : run.ranks) max_ms = std::max(max_ms, ms(r.total.wall_ns / std::max<double>(1, r.steps.size())));
  std::string o = fmt::format("<svg id='chart-ranks' class=chart width={} height={} role=img>", W, h);
  int y = 5;
  for (const auto& r : run.ranks) {
    double n = std::max<double>(1, r.steps.size());
    const auto& t = r.total;
    double v[] = {ms(t.compute_ns / n),   ms(t.comm_exposed_ns / n), ms(t.copy_exposed_ns / n),
                  ms(t.idle_host_ns / n), ms(t.idle_sync_ns / n),    ms(t.idle_dependency_ns / n),
                  ms(t.idle_other_ns / n)};
    o += fmt::format("<text x=0 y={} class=lbl>rank {}</text>", y + 16, r.trace->rank);
    double x = left;
    for (int i = 0; i < 7; ++i) {
      double w = max_ms > 0 ? v[i] / max_ms * (W - left - 80) : 0;
      if (w > 0)
        o += fmt::format("<rect x={:.1f} y={} width={:.1f} height={} fill='{}'><title>{}: {:.3f} ms</title></rect>", x, y,
                         w, row - 6, kParts[i].color, kParts[i].name, v[i]);
      x += w;
    }
    o += fmt::format("<text x={:.1f} y={} class=lbl>{:.2f} ms</text>", x + 4, y + 16, ms(t.wall_ns / n));
    y += row;
  }
  return o + "</svg>" + legend();
}

// One step of one rank: lanes of compute, NCCL, copies, DataLoader and syncs.
std::string timeline(const RankAnalysis& r) {
  const auto& w = r.windows.front();
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
  std::string o = fmt::format("<svg id='chart-timeline' class=chart width={} height={} role=img>", W, 5 * lane + 30);
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
  o += fmt::format("<text x={} y={} class=lbl>0</text><text x={} y={} class=lbl text-anchor=end>{:.2f} ms</text>", left,
                   y + 14, W - 2, y + 14, ms(span));
  return o + "</svg>";
}

std::string classChart(const KernelSummary& k) {
  const int W = 900, left = 170, row = 20;
  std::string o = fmt::format("<svg id='chart-classes' class=chart width={} height={} role=img>", W,
                              static_cast<int>(k.classes.size()) * row + 10);
  int y = 4;
  for (const auto& c : k.classes) {
    double wd = c.share * (W - left - 120);
    o += fmt::format("<text x=0 y={} class=lbl>{}</text><rect x={} y={} width={:.1f} height={} fill='#495057'/>"
                     "<text x={:.1f} y={} class=lbl>{:.1f}% ({:.2f} ms, {} kernels)</text>",
                     y + 13, kernelClassName(c.cls), left, y, wd, row - 5, left + wd + 4, y + 13, 100 * c.share,
                     ms(static_cast<double>(c.dur.total_ns)), c.dur.count);
    y += row;
  }
  return o + "</svg>";
}

std::string collectiveChart(const std::vector<CollectiveStats>& cs) {
  const int W = 900, left = 260, row = 20;
  double mx = 0;
  for (const auto& c : cs) mx = std::max(mx, c.busbw_gbps);
  std::string o = fmt::format("<svg id='chart-collectives' class=chart width={} height={} role=img>", W,
                              static_cast<int>(cs.size()) * row + 10);
  int y = 4;
  for (const auto& c : cs) {
    double wd = mx > 0 ? c.busbw_gbps / mx * (W - left - 160) : 0;
    o += fmt::format("<text x=0 y={} class=lbl>{} {} {} x{}</text><rect x={} y={} width={:.1f} height={} "
                     "fill='#e8590c'/><text x={:.1f} y={} class=lbl>busbw {:.2f} GB/s, mean {:.1f} us</text>",
                     y + 13, esc(c.collective), esc(c.dtype),
                     c.bytes > 0 ? fmt::format("{:.2f} MiB", static_cast<double>(c.bytes) / (1 << 20)) : "size unknown",
                     c.dur.count, left,
                     y, wd, row - 5, left + wd + 4, y + 13, c.busbw_gbps, c.dur.mean_ns / 1e3);
    y += row;
  }
  return o + "</svg>";
}

std::string yesNo(const std::optional<bool>& b) { return b ? (*b ? "yes" : "no") : "unknown"; }
std::string orUnknown(const std::string& s) { return s.empty() ? "unknown" : s; }

// What the job already does: one row per profile field, its host syncs, and what the trace could not tell.
std::string jobSection(const JobProfile& p) {
  std::string o = "<h2>Job (from the trace)</h2><table id=job>";
  auto row = [&](const std::string& k, const std::string& v) {
    o += "<tr><th>" + esc(k) + "</th><td>" + esc(v) + "</td></tr>";
  };
  row("framework", orUnknown(p.framework) + (p.framework_version.empty() ? "" : " " + p.framework_version));
  const auto& s = p.precision_shares;
  row("precision", fmt::format("{} (GEMM/conv/attention time: fp32 {:.0f}%, tf32 {:.0f}%, bf16 {:.0f}%, fp16 {:.0f}%, "
                               "fp8 {:.0f}%, unknown {:.0f}%)",
                               orUnknown(p.precision), 100 * s.fp32, 100 * s.tf32, 100 * s.bf16, 100 * s.fp16,
                               100 * s.fp8, 100 * s.unknown));
  row("autocast", yesNo(p.autocast));
  row("grad scaler", p.grad_scaler ? "yes" : "no");
  row("gradient accumulation",
      p.grad_accumulation_steps ? fmt::format("{} backward pass{} per optimizer step", *p.grad_accumulation_steps,
                                                            *p.grad_accumulation_steps == 1 ? "" : "es")
                                : std::string("unknown"));
  row("data parallelism", orUnknown(p.data_parallel) + (p.ranks ? fmt::format(", {} rank{}", *p.ranks, *p.ranks == 1 ? "" : "s") : "") +
                              (p.data_parallel_basis.empty() ? "" : " (" + p.data_parallel_basis + ")"));
  row("torch.compile", p.torch_compile ? "yes" : "no");
  row("CUDA graphs", p.cuda_graphs ? "yes" : "no");
  row("activation checkpointing",
      yesNo(p.activation_checkpointing) +
          (p.recompute_share && *p.recompute_share > 0 ? fmt::format(", {:.0f}% of forward GPU time recomputed",
                                                                     100 * *p.recompute_share)
                                                       : ""));
  row("optimizer", orUnknown(p.optimizer) + ", " + orUnknown(p.optimizer_impl) +
                       (p.optimizer_impl.empty() ? "" : fmt::format(", {:.0f} launches per step", p.optimizer_launches_per_step)));
  row("DataLoader", !p.dataloader ? std::string("none recorded")
                    : p.loader_workers == 0 ? std::string("0 workers (loads in the training process)")
                                            : std::string("worker processes (number not in the trace)"));
  row("host-to-device copies", p.pin_memory ? (*p.pin_memory ? "pinned" : "pageable") : "none");
  o += "</table>";
  if (!p.host_syncs.empty()) {
    o += "<table id=host-syncs><tr><th>operator</th><th>blocking call</th><th>caller</th><th>copy</th>"
         "<th>per step</th><th>host ms/step</th><th>wait ms/step</th></tr>";
    for (const auto& h : p.host_syncs)
      o += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3g}</td><td>{:.3f}</td><td>{:.3f}</td></tr>",
                       h.op.empty() ? "(none)" : esc(h.op), esc(h.call), h.caller.empty() ? "(step)" : esc(h.caller),
                       esc(h.copy), h.count_per_step, ms(h.host_ns_per_step), ms(h.wait_ns_per_step));
    o += "</table>";
  }
  if (!p.notes.empty()) {
    o += "<ul id=job-notes>";
    for (const auto& n : p.notes) o += "<li>" + esc(n) + "</li>";
    o += "</ul>";
  }
  return o;
}

}  // namespace

std::string renderHtml(const RunAnalysis& run, const Diagnosis& d) {
  std::string o = R"(<!doctype html><html lang=en><head><meta charset=utf-8><title>gpudoctor report</title><style>
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:980px;color:#212529}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #dee2e6}
.f{border-left:4px solid #adb5bd;padding:6px 12px;margin:10px 0;background:#f8f9fa}
.critical{border-color:#c92a2a}.warning{border-color:#f08c00}.info{border-color:#1971c2}.ok{border-color:#2b8a3e}
pre{background:#212529;color:#f8f9fa;padding:8px;overflow-x:auto}table{border-collapse:collapse}
td,th{border:1px solid #dee2e6;padding:3px 8px;text-align:left}.lbl{font-size:12px}
.legend span{margin-right:14px;font-size:12px}.legend i{display:inline-block;width:10px;height:10px;margin-right:4px}
.pass{color:#2b8a3e}.fail{color:#c92a2a}
</style></head><body>)";
  o += fmt::format("<h1>gpudoctor: {} rank{}, mean step {:.2f} ms, primary bottleneck: {}</h1>", run.ranks.size(),
                   run.ranks.size() == 1 ? "" : "s", d.step_ms, esc(d.primary));
  if (!run.notes.empty()) {
    o += "<ul id=trace-notes>";
    for (const auto& n : run.notes) o += "<li>" + esc(n) + "</li>";
    o += "</ul>";
  }
  o += jobSection(run.job);
  o += "<h2>Findings</h2><div id=findings>";
  for (const auto& f : d.findings) {
    o += fmt::format("<div class='f {}'><b>[{}] {}</b>", severityName(f.severity), severityName(f.severity), esc(f.title));
    if (f.gain_ms_per_step > 0)
      o += fmt::format(" &mdash; saves &le; {:.2f} ms/step ({:.0f}%)", f.gain_ms_per_step, 100 * f.gain_share);
    o += "<ul>";
    for (const auto& e : f.evidence) o += fmt::format("<li>{}: {:.4g} {}</li>", esc(e.name), e.value, esc(e.unit));
    o += "</ul>";
    if (!f.explanation.empty()) o += "<p>" + esc(f.explanation) + "</p>";
    if (!f.fix.empty()) {
      o += "<pre>";
      for (const auto& l : f.fix) o += esc(l) + "\n";
      o += "</pre>";
    }
    if (f.gain_ms_per_step > 0) o += "<p><small>Gain estimate: " + esc(f.gain_basis) + "</small></p>";
    if (f.what_if.available) {
      o += fmt::format("<p class=predicted>Predicted by replay: {:.2f} ms/step un-profiled after this fix, {:.2f}x",
                       ms(static_cast<double>(f.what_if.step_ns)), f.what_if.speedup);
      if (!f.what_if.next_bottleneck.empty()) o += ", then limited by " + esc(f.what_if.next_bottleneck);
      o += "<br><small>" + esc(f.what_if.basis) + "</small></p>";
    }
    o += "</div>";
  }
  o += "</div>";
  if (!d.plan.empty()) {
    o += "<h2>Plan (fixes applied one after another, predicted by replay";
    if (d.what_if.available)
      o += fmt::format("; un-profiled step {:.2f} ms", ms(static_cast<double>(d.what_if.unprofiled_step_ns)));
    o += ")</h2><table id=plan><tr><th>step</th><th>fix</th><th>finding</th><th>predicted ms/step</th><th>speedup</th>"
         "<th>then limited by</th></tr>";
    int n = 0;
    for (const auto& p : d.plan)
      o += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.2f}</td><td>{:.2f}x</td><td>{}</td></tr>", ++n,
                       esc(p.fix), esc(p.finding), ms(static_cast<double>(p.step_ns)), p.speedup,
                       p.next_bottleneck.empty() ? "&mdash;" : esc(p.next_bottleneck));
    o += "</table>";
  }
  o += "<h2>Per-rank step breakdown (mean per step)</h2>" + rankChart(run);
  const auto& r0 = run.ranks.front();
  o += fmt::format("<h2>Timeline of rank {}, step {}</h2>", r0.trace->rank,
                   r0.windows.front().annotated ? std::to_string(r0.windows.front().number) : std::string("(all)"));
  o += timeline(r0);
  o += "<h2>Kernel classes (share of summed kernel time)</h2>" + classChart(run.kernels);
  if (!run.collectives.empty()) o += "<h2>NCCL collectives (bus bandwidth)</h2>" + collectiveChart(run.collectives);
  o += "<h2>Checklist</h2><table id=checklist><tr><th>area</th><th>item</th><th>status</th><th>evidence</th></tr>";
  for (const auto& c : d.checklist)
    o += fmt::format("<tr><td>{}</td><td>{}</td><td class={}>{}</td><td>{}</td></tr>", esc(c.area), esc(c.item),
                     c.status == CheckStatus::kPass ? "pass" : c.status == CheckStatus::kFail ? "fail" : "na",
                     checkStatusName(c.status), esc(c.evidence));
  o += "</table><h2>Top kernels</h2><table><tr><th>kernel</th><th>class</th><th>count</th><th>total ms</th><th>share</th></tr>";
  for (const auto& k : run.kernels.top)
    o += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.3f}</td><td>{:.1f}%</td></tr>", esc(k.name.substr(0, 160)),
                     kernelClassName(k.cls), k.dur.count, ms(static_cast<double>(k.dur.total_ns)), 100 * k.share);
  o += "</table><p><small>Made by gpudoctor " GPUDOCTOR_VERSION
       ". Definitions of every figure: the README's Definitions section.</small></p>"
       "<script>document.body.dataset.rendered=document.querySelectorAll('svg.chart').length</script>"
       "</body></html>\n";
  return o;
}

}  // namespace gpudoctor
