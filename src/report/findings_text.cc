#include "report/findings_text.h"

#include <algorithm>
#include <cmath>

#include "analysis/compare.h"
#include "diagnosis/what_if.h"
#include "report/style.h"
#include "report/text.h"

#include <fmt/format.h>

namespace gpudoctor {

namespace {
std::string number(double v) {
  if (v == std::floor(v) && std::abs(v) < 1e15) return fmt::format("{:.0f}", v);  // counts: "2 settings", not "2.00"
  if (std::abs(v) < 0.01) return fmt::format("{:.4f}", v);
  if (std::abs(v) < 100) return fmt::format("{:.2f}", v);
  return fmt::format("{:.0f}", v);
}

// `text` wrapped at the report width (textWidth), its first line led by `lead`, the others indented as far.
std::string hanging(const std::string& lead, const std::string& text) {
  std::string o = wrapText(text, std::string(lead.size(), ' '), textWidth());
  return lead + o.substr(lead.size());
}

// A finding's code lines as a block to paste: "fix:" alone, then each line as written, indented four
// columns more and never wrapped (a line's own indentation is kept; nothing else shares its line).
std::string fixBlock(const std::vector<std::string>& lines) {
  if (lines.empty()) return "";
  std::string o = "    fix:\n";
  for (const auto& line : lines) o += line.empty() ? "\n" : "        " + line + "\n";
  return o;
}

// The findings in the terminal's order: critical, warning, info, each class in the diagnosis's order.
std::vector<const Finding*> bySeverity(const std::vector<Finding>& findings) {
  std::vector<const Finding*> order;
  for (const auto& f : findings) order.push_back(&f);
  std::stable_sort(order.begin(), order.end(),
                   [](const Finding* a, const Finding* b) { return a->severity < b->severity; });
  return order;
}

// The plan: the fixes applied one after another, as the replay predicts them (never truncated).
std::string renderPlan(const Diagnosis& d, bool color) {
  if (d.plan.empty()) return "";
  std::string o = "\n" +
                  paint(d.what_if.available ? fmt::format("Plan (predicted by replay, un-profiled step {:.2f} ms)",
                                                          d.what_if.unprofiled_step_ns / 1e6)
                                            : "Plan (predicted by replay)",
                        Tone::kHeading, color) +
                  "\n";
  size_t n = 0;
  for (const auto& p : d.plan) {
    std::string what = p.fix.empty() ? p.finding : p.finding.empty() ? p.fix : fmt::format("{} ({})", p.fix, p.finding);
    std::string tied;
    for (const auto& a : p.within_accuracy)
      tied += fmt::format("{}{} {:.2f}x", tied.empty() ? "" : ", ", a.fix.empty() ? a.finding : a.fix, a.speedup);
    o += hanging(fmt::format("  {}. ", ++n),
                 fmt::format("{}: {:.2f} ms/step, {:.2f}x{}{}", what, p.step_ns / 1e6, p.speedup,
                             p.next_bottleneck.empty() ? "" : "; then " + p.next_bottleneck,
                             tied.empty() ? ""
                                          : fmt::format("; as good within the replay's accuracy ({:.0f} %): {}",
                                                        100 * kPlanTieShare, tied)));
  }
  return o;
}

// How far this trace's un-profiled estimate is likely off: the lab's median, or more where the
// estimate took a large share of the traced step away as the profiler's cost (that share's typical
// error, analysis/compare.h).
double expectedUnprofiledError(const StepWhatIf& w) {
  const double removed =
      profilerShareOf(static_cast<double>(w.unprofiled_step_ns), static_cast<double>(w.traced_step_ns));
  return std::max(kUnprofiledMedianError, kEstimateErrorPerProfilerShare * std::max(removed, 0.0));
}
}  // namespace

std::string renderFindings(const Diagnosis& d, size_t max, bool color) {
  const std::string heading =
      headingLines(d.what_if.available
                       ? "Findings by severity; in each, replay-predicted speedups first, then upper bounds of the gain"
                       : "Findings by severity; in each, by the step time a fix can save (upper bounds)");
  std::string o = paint(heading, Tone::kHeading, color) + "\n";
  if (d.what_if.available)
    o += wrapText(
        fmt::format(
            "un-profiled step (replay): {:.2f} ms (traced {:.2f} ms, the loop's steady state{}), limited by {}",
            d.what_if.unprofiled_step_ns / 1e6, d.what_if.traced_step_ns / 1e6,
            d.what_if.measured_step_ns <= 0 && d.what_if.pool_period_unidentified
                ? fmt::format("; the DataLoader pool's period is not in these steps: {} of their {} fetches waited "
                              "for a batch, so the step is the steps' mean, which a burst of the workers' batches or "
                              "a prefetch queue still emptying moves either way; trace more steps (two waits apart) "
                              "or give --measured-step-ms",
                              d.what_if.pool_waited_fetches, d.what_if.pool_fetches)
            : d.what_if.measured_step_ns <= 0
                ? fmt::format("; from the trace alone, expect it within about {:.0f} % (the lab's jobs: {:.0f} % "
                              "in the median, up to {:.0f} %); --measured-step-ms anchors it",
                              100 * expectedUnprofiledError(d.what_if), 100 * kUnprofiledMedianError,
                              100 * kUnprofiledWorstError)
            : d.what_if.anchored
                ? fmt::format("; matched to the measured {:.2f} ms, the profiler's estimated host cost x {:.2f}",
                              d.what_if.measured_step_ns / 1e6, d.what_if.profiler_cost_factor)
                : fmt::format("; the measured {:.2f} ms NOT matched: {}", d.what_if.measured_step_ns / 1e6,
                              d.what_if.anchor_note),
            d.what_if.bottleneck.empty() ? "unknown" : d.what_if.bottleneck),
        "  ", textWidth());
  if (d.what_if.available) {
    // One step everywhere: the steady-state period, and what sets it.
    const auto& t = d.what_if.traced_parts;
    o += wrapText(fmt::format("step = the loop's steady state, the largest of: host {:.2f} ms, GPU {:.2f} ms, busiest "
                              "stream's work {:.2f} ms{}; traced: set by the {}",
                              t.host_ns / 1e6, t.gpu_ns / 1e6, t.busy_ns / 1e6,
                              t.loader_ns > 0 ? fmt::format(", loader pool {:.2f} ms", t.loader_ns / 1e6) : "",
                              t.bound == "gpu_busy" ? "GPU's work"
                              : t.bound == "gpu"    ? "GPU"
                                                    : t.bound),
                  "  ", textWidth());
    if (d.what_if.steps_replayed < d.what_if.steps_in_trace)
      o += fmt::format("  the what-if replays the first {} of the trace's {} steps\n", d.what_if.steps_replayed,
                       d.what_if.steps_in_trace);
  }
  size_t n = 0;
  for (const Finding* fp : bySeverity(d.findings)) {
    const Finding& f = *fp;
    if (max && n == max) {
      o += fmt::format("  ... {} more in --json / --html\n", d.findings.size() - n);
      break;
    }
    ++n;
    std::string gain =
        f.gain_ms_per_step > 0
            ? fmt::format("  [saves {} {:.2f} ms/step, {:.0f}%{}{}]",
                          f.gain_is_estimate ? "about" : "<=", f.gain_ms_per_step, 100 * f.gain_share,
                          f.gain_is_estimate ? ", not a bound" : "",
                          f.floor_step_ms > 0 ? fmt::format("; the step stays >= {:.2f} ms", f.floor_step_ms) : "")
            : "";
    // The severity tag painted once the line is laid out: it always opens the first line, after the number.
    const std::string lead = fmt::format(" {}. ", n), tag = fmt::format("[{}]", severityName(f.severity));
    const std::string head = hanging(lead, fmt::format("{} {}{}", tag, f.title, gain));
    o += lead + paintFront(head.substr(lead.size()), tag.size(), severityTone(f.severity), color);
    std::string ev;
    for (const auto& e : f.evidence)
      ev += fmt::format("{}{} {}{}{}", ev.empty() ? "" : "; ", e.name, number(e.value), e.unit.empty() ? "" : " ",
                        e.unit);
    if (!ev.empty()) o += wrapText("evidence: " + ev, "    ", textWidth());
    if (!f.explanation.empty()) o += wrapText("why: " + f.explanation, "    ", textWidth());
    o += fixBlock(f.fix);
    if (f.gain_ms_per_step > 0) o += wrapText("gain: " + f.gain_basis, "    ", textWidth());
    if (f.what_if.available)
      o += wrapText(
          fmt::format("predicted (replay): {:.2f} ms/step un-profiled after this fix, {:.2f}x{}; {}",
                      f.what_if.step_ns / 1e6, f.what_if.speedup,
                      f.what_if.next_bottleneck.empty() ? "" : ", then limited by " + f.what_if.next_bottleneck,
                      f.what_if.basis),
          "    ", textWidth());
    else if (!f.what_if.basis.empty())  // a prediction withheld, and why
      o += wrapText("no prediction (replay): " + f.what_if.basis, "    ", textWidth());
  }
  o += renderPlan(d, color);
  return o;
}

std::string renderChecklist(const Diagnosis& d, bool color) {
  std::string o = paint("Checklist", Tone::kHeading, color) + "\n";
  o += fmt::format("  {:<14} {:<52} {:<15}\n", "area", "item", "status");
  for (const auto& c : d.checklist) {
    const std::string_view status = checkStatusName(c.status);
    const std::string cell = fmt::format("{:<15}", status);
    o += fmt::format(
        "  {:<14} {:<52} {}\n", c.area, c.item,
        c.status == CheckStatus::kUnknown
            ? cell
            : paintFront(cell, status.size(), c.status == CheckStatus::kFail ? Tone::kCritical : Tone::kGood, color));
    o += wrapText(c.evidence, "      ", textWidth());
  }
  return o;
}

}  // namespace gpudoctor
