#include "report/terminal.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "report/step_notes.h"
#include "report/style.h"
#include "report/text.h"

namespace gpudoctor {

namespace {
double ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }
double us(double ns) { return ns / 1e3; }
double pct(int64_t part, int64_t whole) {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

std::string shorten(std::string_view s, size_t n) {
  if (s.substr(0, 5) == "void ") s.remove_prefix(5);
  if (s.size() <= n) return std::string(s);
  return std::string(s.substr(0, n - 3)) + "...";
}

std::string bytesText(int64_t b) {
  if (b >= (1LL << 30)) return fmt::format("{:.2f} GiB", static_cast<double>(b) / (1LL << 30));
  if (b >= (1LL << 20)) return fmt::format("{:.2f} MiB", static_cast<double>(b) / (1LL << 20));
  if (b >= (1LL << 10)) return fmt::format("{:.1f} KiB", static_cast<double>(b) / (1LL << 10));
  return fmt::format("{} B", b);
}

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// The profile's items, each a short phrase; unknowns are said as such.
std::vector<std::string> jobItems(const JobProfile& p) {
  std::vector<std::string> it;
  it.push_back(p.framework == "pytorch" ? "PyTorch" : p.framework.empty() ? "framework unknown" : p.framework);
  if (p.mode == "inference") it.push_back("inference");
  std::string prec = p.precision.empty()      ? "precision unknown"
                     : p.precision == "mixed" ? "mixed precision"
                                              : p.precision;
  // An FP32 job part of whose work cuDNN (or an allowed matmul) runs in TF32.
  if (p.precision == "fp32" && p.precision_shares.tf32 >= 0.1)
    prec += fmt::format(" ({:.0f} % of GEMM time in TF32)", 100 * p.precision_shares.tf32);
  if (p.autocast.value_or(false)) prec += " autocast";
  if (p.grad_scaler) prec += " + GradScaler";
  it.push_back(prec);
  if (p.grad_accumulation_steps && *p.grad_accumulation_steps > 1)
    it.push_back(fmt::format("grad accumulation x{}", *p.grad_accumulation_steps));
  if (p.data_parallel == "none")
    it.push_back(p.ranks.value_or(1) > 1 ? fmt::format("{} ranks, no data parallelism", *p.ranks) : "1 GPU");
  else if (p.data_parallel.empty())
    it.push_back("data parallelism unknown");
  else
    it.push_back(fmt::format("{}{}", p.data_parallel == "zero" ? "ZeRO" : upper(p.data_parallel),
                             p.ranks ? fmt::format(" x{}", *p.ranks) : ""));
  if (p.activation_checkpointing.value_or(false))
    it.push_back(p.recompute_share
                     ? fmt::format("activation checkpointing ({:.0f}% of forward recomputed)", 100 * *p.recompute_share)
                     : "activation checkpointing");
  if (!p.optimizer.empty() || !p.optimizer_impl.empty()) {
    std::string impl = p.optimizer_impl == "loop" ? "per-parameter loop" : p.optimizer_impl;
    it.push_back(
        fmt::format("{} {}", p.optimizer.empty() ? "optimizer" : p.optimizer, impl.empty() ? "(impl unknown)" : impl));
  } else if (p.mode != "inference") {
    it.push_back(p.notInSource("optimizer") ? "optimizer not recorded" : "optimizer unknown");
  }
  std::string pin = p.pin_memory ? (*p.pin_memory ? "pinned" : "pageable") : "";
  if (p.notInSource("dataloader"))
    it.push_back(pin.empty() ? "DataLoader not recorded" : "DataLoader not recorded (" + pin + " input copies)");
  else if (!p.dataloader)
    it.push_back(pin.empty() ? "no DataLoader" : "no DataLoader (" + pin + " input copies)");
  else
    it.push_back(std::string(p.loader_workers == 0 ? "DataLoader 0 workers" : "DataLoader with workers") +
                 (pin.empty() ? "" : " (" + pin + ")"));
  it.push_back(p.torch_compile ? "torch.compile" : "no compile");
  it.push_back(!p.cuda_graphs               ? "no CUDA graphs"
               : p.graph_phase == "capture" ? "CUDA graphs (capture)"
                                            : "CUDA graphs");
  return it;
}

// "Job: ..." wrapped at the report width (textWidth), then the host syncs and any per-rank differences.
std::string jobBlock(const JobProfile& p) {
  std::string o, line = "Job:";
  auto add = [&](const std::string& item, bool last) {
    std::string piece = " " + item + (last ? "" : ",");
    if (line.size() + piece.size() > textWidth()) {
      o += line + "\n";
      line = "    ";
    }
    line += piece;
  };
  auto items = jobItems(p);
  for (size_t i = 0; i < items.size(); ++i) add(items[i], i + 1 == items.size());
  o += line + "\n";
  if (!p.host_syncs.empty()) {
    line = "  host syncs:";
    size_t shown = 0;
    for (const auto& h : p.host_syncs) {
      if (shown == 4) break;
      std::string what = h.op.empty() ? h.call : h.op;
      if (!h.caller.empty()) what += " in " + (h.caller.size() > 32 ? h.caller.substr(0, 29) + "..." : h.caller);
      ++shown;
      bool more = shown < p.host_syncs.size() && shown < 4;
      std::string piece = fmt::format(" {} {:.3g}/step ({:.2f} ms){}", what, h.count_per_step, h.host_ns_per_step / 1e6,
                                      more ? "," : "");
      if (line.size() + piece.size() > textWidth()) {
        o += line + "\n";
        line = "   ";
      }
      line += piece;
    }
    if (p.host_syncs.size() > 4) line += fmt::format(" (+{} more)", p.host_syncs.size() - 4);
    o += line + "\n";
  }
  for (const auto& n : p.notes)
    if (n.rfind("ranks differ: ", 0) == 0) o += wrapText(n, "  ", textWidth());
  return o;
}

void rankRow(std::string& o, const RankAnalysis& r) {
  const auto& t = r.total;
  auto n = static_cast<int64_t>(r.steps.size());
  o += fmt::format(
      "{:>5} {:>9.2f} {:>7.1f}% {:>7.1f}% {:>7.1f}% {:>7.1f}% {:>6.1f}% {:>6.1f}% {:>8.2f} {:>8.2f} {:>7.1f}\n",
      r.trace->rank, ms(t.wall_ns / std::max<int64_t>(1, n)), pct(t.gpu_busy_ns, t.wall_ns),
      pct(t.compute_ns, t.wall_ns), pct(t.comm_ns, t.wall_ns), pct(t.comm_exposed_ns, t.wall_ns),
      pct(t.copy_exposed_ns, t.wall_ns), pct(t.idle_ns, t.wall_ns), ms(t.dataloader_ns / std::max<int64_t>(1, n)),
      ms(t.sync_ns / std::max<int64_t>(1, n)), us(static_cast<double>(t.launch_latency.p50_ns)));
}

// The title, one line per rank (at most four), the run's notes and the job's profile.
std::string headerText(const RunAnalysis& run, bool c) {
  std::string o;
  const auto& first = run.ranks.front();
  size_t steps = first.steps.size();
  std::string step_names;
  if (first.windows.front().annotated)
    step_names = first.windows.size() == 1
                     ? fmt::format("step #{}", first.windows.front().number)
                     : fmt::format("steps #{}..#{}", first.windows.front().number, first.windows.back().number);
  else
    step_names = "no step annotations: one window over all GPU activity";
  o += paint(fmt::format("gpudoctor analyze: {} rank{}, {} step{} ({})", run.ranks.size(),
                         run.ranks.size() == 1 ? "" : "s", steps, steps == 1 ? "" : "s", step_names),
             Tone::kHeading, c) +
       "\n";
  for (size_t i = 0; i < run.ranks.size() && i < 4; ++i) {
    const auto* t = run.ranks[i].trace;
    std::string dev = t->devices.empty() ? "" : ", " + t->devices.front().name;
    // Long paths keep their informative tail so the line fits in the report width.
    std::string path = t->path;
    if (dev.size() > 40) dev = dev.substr(0, 40);
    size_t room = textWidth() - 12 - dev.size();
    if (path.size() > room) path = "..." + path.substr(path.size() - (room - 3));
    o += fmt::format("  rank {}: {}{}\n", t->rank, path, dev);
  }
  if (run.ranks.size() > 4) o += fmt::format("  ... and {} more\n", run.ranks.size() - 4);
  for (size_t i = 0; i < run.notes.size() && i < 8; ++i) o += wrapLed("  ", "note: " + run.notes[i], "    ");
  if (run.notes.size() > 8) o += fmt::format("  ... and {} more notes (--json has all)\n", run.notes.size() - 8);
  o += jobBlock(run.job);
  return o;
}
}  // namespace

std::string renderTerminal(const RunAnalysis& run, const TerminalOptions& opt) {
  TerminalParts p = renderTerminalParts(run, opt);
  return p.header + p.body;
}

TerminalParts renderTerminalParts(const RunAnalysis& run, const TerminalOptions& opt) {
  TerminalParts parts;
  parts.header = headerText(run, opt.color);
  const bool c = opt.color;
  const auto& first = run.ranks.front();
  std::string o;
  o += "\n" + paint("Per rank, mean per step (% of step wall time)", Tone::kHeading, c) + "\n";
  o += fmt::format("{:>5} {:>9} {:>8} {:>8} {:>8} {:>8} {:>7} {:>7} {:>8} {:>8} {:>7}\n", "rank", "step ms", "GPU busy",
                   "compute", "NCCL", "exposed", "copies", "idle", "loadr ms", "sync ms", "lat us");
  if (run.ranks.size() <= opt.max_rank_rows) {
    for (const auto& r : run.ranks) rankRow(o, r);
  } else {
    std::vector<const RankAnalysis*> order;
    for (const auto& r : run.ranks) order.push_back(&r);
    std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->total.wall_ns > b->total.wall_ns; });
    o += "  (slowest 5 ranks by step time)\n";
    for (size_t i = 0; i < 5; ++i) rankRow(o, *order[i]);
    o += "  (fastest rank)\n";
    rankRow(o, *order.back());
  }
  o += wrapText(
      "exposed = NCCL time with no compute kernel running; copies = memcpy/memset with no kernel running; "
      "lat = median launch latency (call end -> GPU start). Definitions: docs/reference/analyze.md.",
      "  ", textWidth());

  const RankAnalysis* dr = &first;
  for (const auto& r : run.ranks)
    if (r.trace->rank == opt.detail_rank) dr = &r;
  o += "\n" + paint(fmt::format("Steps of rank {} (ms)", dr->trace->rank), Tone::kHeading, c) + "\n";
  o += fmt::format("{:>6} {:>8} {:>8} {:>8} {:>8} {:>8} {:>7} {:>8} {:>7} {:>7} {:>7} {:>7}\n", "step", "wall", "busy",
                   "compute", "NCCL", "exposed", "copies", "idle", "host", "sync", "depend", "other");
  auto step_row = [&](const std::string& label, const StepBreakdown& b) {
    o += fmt::format(
        "{:>6} {:>8.3f} {:>8.3f} {:>8.3f} {:>8.3f} {:>8.3f} {:>7.3f} {:>8.3f} {:>7.3f} {:>7.3f} {:>7.3f} {:>7.3f}\n",
        label, ms(b.wall_ns), ms(b.gpu_busy_ns), ms(b.compute_ns), ms(b.comm_ns), ms(b.comm_exposed_ns),
        ms(b.copy_exposed_ns), ms(b.idle_ns), ms(b.idle_host_ns), ms(b.idle_sync_ns), ms(b.idle_dependency_ns),
        ms(b.idle_other_ns));
  };
  for (const auto& b : dr->steps) step_row(b.window.annotated ? fmt::format("#{}", b.window.number) : "all", b);
  if (dr->steps.size() > 1) step_row("total", dr->total);
  o += wrapText("wall = compute + exposed + copies + idle; idle = host + sync + depend + other (why the GPU waited)",
                "  ", textWidth());
  if (const std::string ahead = hostAheadNote(*dr); !ahead.empty()) o += wrapText(ahead, "  ", textWidth());

  const auto& t = dr->total;
  o +=
      "\n" +
      paint(fmt::format("Host side of rank {} over {} step(s)", dr->trace->rank, dr->steps.size()), Tone::kHeading, c) +
      "\n";
  o += wrapText(fmt::format("DataLoader next(): {:.3f} ms;  optimizer step: {:.3f} ms;  blocking syncs: {:.3f} ms",
                            ms(t.dataloader_ns), ms(t.optimizer_ns), ms(t.sync_ns)),
                "  ", textWidth());
  const auto& l = t.launch_latency;
  if (l.count)
    o += fmt::format("  launch latency over {} launches: p50 {:.1f} us, p95 {:.1f} us, max {:.1f} us\n", l.count,
                     us(static_cast<double>(l.p50_ns)), us(static_cast<double>(l.p95_ns)),
                     us(static_cast<double>(l.max_ns)));
  bool any_copy = false;
  for (int d = 0; d < kCopyDirCount; ++d) any_copy |= t.copies[d].count > 0;
  if (any_copy) {
    o += fmt::format("  copies: {:<7} {:>7} {:>12} {:>10}\n", "kind", "count", "bytes", "ms");
    for (int d = 0; d < kCopyDirCount; ++d) {
      const auto& cp = t.copies[d];
      if (!cp.count) continue;
      o += fmt::format("          {:<7} {:>7} {:>12} {:>10.3f}\n", copyDirName(static_cast<CopyDir>(d)), cp.count,
                       bytesText(cp.bytes), ms(cp.dur_ns));
    }
    if (t.pageable_htod.count || t.pinned_htod.count)
      o += fmt::format("  host->device: {} pageable ({}), {} pinned ({})\n", t.pageable_htod.count,
                       bytesText(t.pageable_htod.bytes), t.pinned_htod.count, bytesText(t.pinned_htod.bytes));
  }

  const auto& k = run.kernels;
  o += "\n" +
       paint(fmt::format("Kernel classes, {} (sum of kernel durations: {:.3f} ms, {} kernels)",
                         run.ranks.size() > 1 ? "all ranks" : "", ms(k.total_ns), k.kernels),
             Tone::kHeading, c) +
       "\n";
  o += fmt::format("  {:<18} {:>8} {:>10} {:>10} {:>10} {:>7}\n", "class", "count", "total ms", "mean us", "median us",
                   "share");
  for (const auto& kc : k.classes)
    o += fmt::format("  {:<18} {:>8} {:>10.3f} {:>10.1f} {:>10.1f} {:>6.1f}%\n", kernelClassName(kc.cls), kc.dur.count,
                     ms(kc.dur.total_ns), us(kc.dur.mean_ns), us(static_cast<double>(kc.dur.p50_ns)), 100 * kc.share);
  o += "\n" + paint(fmt::format("Top {} kernels by total time", k.top.size()), Tone::kHeading, c) + "\n";
  o +=
      fmt::format("  {:<44} {:>6} {:>9} {:>9} {:>6}  {}\n", "kernel", "count", "total ms", "mean us", "share", "class");
  for (const auto& x : k.top)
    o += fmt::format("  {:<44} {:>6} {:>9.3f} {:>9.1f} {:>5.1f}%  {}\n", shorten(x.name, 44), x.dur.count,
                     ms(x.dur.total_ns), us(x.dur.mean_ns), 100 * x.share, kernelClassName(x.cls));

  if (!run.collectives.empty()) {
    o +=
        "\n" +
        paint(headingLines(
                  "Collectives (kernel time includes waiting for peers; variant: named by the kernel, or its library)"),
              Tone::kHeading, c) +
        "\n";
    o += fmt::format("  {:<14} {:<9} {:>11} {:<10} {:>3} {:>6} {:>9} {:>9} {:>8} {:>8}\n", "collective", "dtype",
                     "size", "variant", "n", "count", "mean us", "p50 us", "algbw", "busbw");
    // With more than one process group, each row says which (its name or rank list).
    std::string first_group;
    bool groups = false;
    for (const auto& col : run.collectives) {
      if (col.process_group.empty()) continue;
      if (first_group.empty()) first_group = col.process_group;
      groups |= col.process_group != first_group;
    }
    for (const auto& col : run.collectives)
      o += fmt::format(
          "  {:<14} {:<9} {:>11} {:<10} {:>3} {:>6} {:>9.1f} {:>9.1f} {:>8.2f} {:>8.2f}\n",
          shorten(groups && !col.process_group.empty() ? col.collective + "@" + col.process_group : col.collective, 14),
          shorten(col.dtype, 9), col.bytes > 0 ? bytesText(col.bytes) : std::string("size ?"), shorten(col.variant, 10),
          col.group_size, col.dur.count, us(col.dur.mean_ns), us(static_cast<double>(col.dur.p50_ns)), col.algbw_gbps,
          col.busbw_gbps);
    o += wrapText("algbw, busbw in GB/s (1e9 bytes/s), nccl-tests definitions, from the mean time.", "  ", textWidth());
  }
  if (run.ranks.size() > 1) {
    const auto& s = run.straggler;
    o += "\n" + paint("Stragglers", Tone::kHeading, c) + "\n" + wrapText(s.note, "  ", textWidth());
    if (s.matched) {
      o += fmt::format("  {:>5} {:>12} {:>12} {:>14}\n", "rank", "NCCL ms", "waiting ms", "arrived last");
      for (const auto& w : s.ranks)
        o += fmt::format("  {:>5} {:>12.3f} {:>12.3f} {:>14}\n", w.rank, ms(w.nccl_ns), ms(w.wait_ns), w.last_arrivals);
    }
  }
  if (opt.read_seconds > 0)
    o += fmt::format("\nRead {} of JSON in {:.2f} s ({:.0f} MB/s).\n", bytesText(static_cast<int64_t>(opt.read_bytes)),
                     opt.read_seconds, static_cast<double>(opt.read_bytes) / 1e6 / opt.read_seconds);
  parts.body = std::move(o);
  return parts;
}

}  // namespace gpudoctor
