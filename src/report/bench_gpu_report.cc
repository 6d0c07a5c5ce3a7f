#include "report/bench_gpu_report.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/style.h"
#include "report/text.h"

namespace gpudoctor {

namespace {

std::string checkText(const CheckFigure& c) {
  if (c.passed) return "ok";
  return c.unwritten > 0 ? fmt::format("FAIL ({} unwritten)", c.unwritten) : "FAIL";
}

std::string gb(int64_t bytes) { return fmt::format("{:.2f}", static_cast<double>(bytes) / 1e9); }

}  // namespace

std::string renderGpuBenchText(const GpuBenchResult& r, const std::vector<GpuSpeedup>& sp) {
  std::string o;
  auto sheet = datasheetCeilings(r.device);
  o += fmt::format("GPU: {} (sm_{}{}, {} SMs, {:.0f} GB, L2 {} MB), {} GPU(s), driver {}, runtime {}{}\n", r.device,
                   r.sm_major, r.sm_minor, r.sms, r.memory_bytes / 1e9, r.l2_bytes >> 20, r.gpus, r.driver, r.runtime,
                   r.quick ? ", --quick" : "");
  o += "Every kernel was checked before it was timed (fresh random inputs, output poisoned first; see check).\n";
  if (!r.gemm.empty()) {
    o += "\nGEMM (cuBLASLt, C = A·B, TN, fp32 accumulation; median of reps, inputs rotated past L2)\n";
    o += fmt::format("  {:<5} {:>17} {:>11} {:>9} {:>10} {:>9}  {}\n", "prec", "m x n x k", "median us", "TFLOP/s",
                     "datasheet", "% sheet", "check (rel L2)");
    for (const auto& g : r.gemm) {
      double ds = sheet ? sheet->peak(g.precision) : 0;
      o += fmt::format("  {:<5} {:>17} {:>11.1f} {:>9.1f} {:>10} {:>9}  {} ({:.1e})\n", gemmPrecisionName(g.precision),
                       fmt::format("{}x{}x{}", g.m, g.n, g.k), g.median_us, g.tflops,
                       ds > 0 ? fmt::format("{:.1f}", ds) : "-",
                       ds > 0 ? fmt::format("{:.0f} %", 100 * g.tflops / ds) : "-", checkText(g.check), g.check.rel_l2);
    }
  }
  if (!r.bandwidth.empty()) {
    o += "\nBandwidth (GB/s = 1e9 bytes/s; copy counts bytes read + written)\n";
    o += fmt::format("  {:<14} {:>10} {:>11} {:>9} {:>10} {:>8}  {}\n", "path", "MB", "median us", "GB/s", "datasheet",
                     "% sheet", "check");
    for (const auto& b : r.bandwidth) {
      double ds = 0;
      if (sheet) {
        if (b.name.rfind("hbm", 0) == 0)
          ds = sheet->hbm_copy_gbps;
        else if (b.name.rfind("h2d", 0) == 0 || b.name.rfind("d2h", 0) == 0)
          ds = sheet->h2d_pinned_gbps;
        else if (b.name.rfind("p2p", 0) == 0)
          ds = sheet->p2p_gbps;
      }
      o += fmt::format("  {:<14} {:>10.0f} {:>11.1f} {:>9.1f} {:>10} {:>8}  {}\n", b.name, b.bytes / 1e6, b.median_us,
                       b.gbps, ds > 0 ? fmt::format("{:.0f}", ds) : "-",
                       ds > 0 ? fmt::format("{:.0f} %", 100 * b.gbps / ds) : "-", checkText(b.check));
    }
  }
  if (!r.attention.empty()) {
    o += "\nAttention forward (bf16, fp32 softmax; unfused = GEMM + softmax + GEMM with the scores in memory)\n";
    o += fmt::format("  {:<12} {:>5} {:>5} {:>6} {:>4} {:>6} {:>11} {:>9} {:>10}  {}\n", "impl", "batch", "heads",
                     "seq", "d", "causal", "median us", "TFLOP/s", "memory GB", "check (rel L2)");
    for (const auto& a : r.attention)
      o += fmt::format("  {:<12} {:>5} {:>5} {:>6} {:>4} {:>6} {:>11.1f} {:>9.1f} {:>10}  {} ({:.1e})\n", a.impl,
                       a.batch, a.heads, a.seq, a.head_dim, a.causal ? "yes" : "no", a.median_us, a.tflops,
                       gb(a.memory_bytes), checkText(a.check), a.check.rel_l2);
  }
  if (!r.fusion.empty()) {
    o += "\nFusion and launch overhead (bias + GeLU + scale + residual, bf16)\n";
    o += fmt::format("  {:<22} {:>11} {:>8} {:>11} {:>13}  {}\n", "what", "elements", "kernels", "median us",
                     "us per kernel", "check");
    for (const auto& f : r.fusion)
      o += fmt::format("  {:<22} {:>11} {:>8} {:>11.2f} {:>13.3f}  {}\n", f.name, f.elements, f.kernels, f.median_us,
                       f.per_kernel_us, checkText(f.check));
  }
  if (!sp.empty()) {
    o += "\nWhat each optimization buys on this GPU\n";
    o += fmt::format("  {:<40} {:<22} {:>8} {:>13}\n", "optimization", "at", "speedup", "memory saved");
    for (const auto& s : sp)
      o += fmt::format("  {:<40} {:<22} {:>7.2f}x {:>13}\n", s.what, s.detail, s.ratio,
                       s.memory_ratio > 0 ? fmt::format("{:.1f}x less", s.memory_ratio) : "");
  }
  for (const auto& n : r.notes) o += wrapLed("", "note: " + n, "  ");
  for (const auto& e : r.errors) o += "ERROR: " + e + "\n";
  if (!r.allPassed()) o += "\nSOME CHECKS FAILED or a part stopped: figures marked FAIL are not trustworthy.\n";
  return o;
}

std::string renderGpuBenchJson(const GpuBenchResult& r, const std::vector<GpuSpeedup>& sp) {
  using Json = nlohmann::json;
  auto check = [](const CheckFigure& c) {
    return Json{{"passed", c.passed},
                {"checked", c.checked},
                {"unwritten", c.unwritten},
                {"rel_l2", c.rel_l2},
                {"worst_of_bound", c.worst_ratio},
                {"reference", c.note}};
  };
  Json j;
  j["device"] = {{"name", r.device},       {"sm", fmt::format("{}{}", r.sm_major, r.sm_minor)},
                 {"sms", r.sms},           {"memory_bytes", r.memory_bytes},
                 {"l2_bytes", r.l2_bytes}, {"gpus", r.gpus},
                 {"driver", r.driver},     {"runtime", r.runtime}};
  j["quick"] = r.quick;
  j["gemm"] = Json::array();
  for (const auto& g : r.gemm)
    j["gemm"].push_back({{"precision", gemmPrecisionName(g.precision)},
                         {"m", g.m},
                         {"n", g.n},
                         {"k", g.k},
                         {"median_us", g.median_us},
                         {"tflops", g.tflops},
                         {"reps", g.reps},
                         {"check", check(g.check)}});
  j["bandwidth"] = Json::array();
  for (const auto& b : r.bandwidth)
    j["bandwidth"].push_back({{"name", b.name},
                              {"bytes", b.bytes},
                              {"median_us", b.median_us},
                              {"gbps", b.gbps},
                              {"reps", b.reps},
                              {"check", check(b.check)}});
  j["attention"] = Json::array();
  for (const auto& a : r.attention)
    j["attention"].push_back({{"impl", a.impl},
                              {"batch", a.batch},
                              {"heads", a.heads},
                              {"seq", a.seq},
                              {"head_dim", a.head_dim},
                              {"causal", a.causal},
                              {"median_us", a.median_us},
                              {"tflops", a.tflops},
                              {"memory_bytes", a.memory_bytes},
                              {"reps", a.reps},
                              {"check", check(a.check)}});
  j["fusion"] = Json::array();
  for (const auto& f : r.fusion)
    j["fusion"].push_back({{"name", f.name},
                           {"elements", f.elements},
                           {"kernels", f.kernels},
                           {"median_us", f.median_us},
                           {"per_kernel_us", f.per_kernel_us},
                           {"reps", f.reps},
                           {"check", check(f.check)}});
  j["speedups"] = Json::array();
  for (const auto& s : sp)
    j["speedups"].push_back(
        {{"what", s.what}, {"at", s.detail}, {"speedup", s.ratio}, {"memory_ratio", s.memory_ratio}});
  j["notes"] = r.notes;
  j["errors"] = r.errors;
  j["all_checks_passed"] = r.allPassed();
  j["tool"] = "gpudoctor bench gpu";
  j["schema_version"] = 1;
  return j.dump(2) + "\n";
}

std::string renderEfficiencyText(const Efficiency& e, bool color) {
  std::string o = "\n" +
                  paint(fmt::format("Efficiency against the ceilings of {}",
                                    e.ceilings_device.empty() ? "(unnamed)" : e.ceilings_device),
                        Tone::kHeading, color) +
                  "\n";
  o += fmt::format("  MFU precision: {} ({}), peak {:.1f} TFLOP/s\n", gemmPrecisionName(e.precision),
                   e.precision_reason, e.peak_tflops);
  if (e.flops_per_step > 0) {
    o += fmt::format("  {:>5} {:>6} {:>10} {:>9} {:>10} {:>7}\n", "rank", "steps", "step ms", "compute", "TFLOP/s",
                     "MFU");
    for (const auto& r : e.ranks)
      o += fmt::format("  {:>5} {:>6} {:>10.2f} {:>8.1f}% {:>10.1f} {:>6.1f}%\n", r.rank, r.steps, r.step_ms,
                       100 * r.compute_share, r.achieved_tflops, 100 * r.mfu);
    if (e.peak_tflops > 0) o += fmt::format("  mean MFU {:.1f} %\n", 100 * e.mean_mfu);
  }
  for (const auto& c : e.copies)
    o += fmt::format("  copies {:<13} {:>6} × {:>12} B  {:>7.1f} GB/s while copying{}\n", c.kind, c.count, c.bytes,
                     c.gbps,
                     c.ceiling_gbps > 0 ? fmt::format(" = {:.0f} % of {:.1f}", 100 * c.share, c.ceiling_gbps) : "");
  if (e.best_busbw_gbps > 0)
    o += fmt::format(
        "  NCCL best busbw {:.1f} GB/s ({}){}\n", e.best_busbw_gbps, e.best_busbw_what,
        e.p2p_gbps > 0 ? fmt::format(" = {:.0f} % of P2P {:.1f} GB/s", 100 * e.best_busbw_gbps / e.p2p_gbps, e.p2p_gbps)
                       : "");
  for (const auto& m : e.missing) o += "  not computed: " + m + "\n";
  for (const auto& w : e.warnings) o += "  " + paint("warning:", Tone::kWarning, color) + " " + w + "\n";
  return o;
}

std::string renderEfficiencyJson(const Efficiency& e) {
  using Json = nlohmann::json;
  Json j;
  j["ceilings_device"] = e.ceilings_device;
  j["precision"] = gemmPrecisionName(e.precision);
  j["precision_reason"] = e.precision_reason;
  j["peak_tflops"] = e.peak_tflops;
  j["flops_per_step"] = e.flops_per_step;
  j["mean_mfu"] = e.mean_mfu;
  j["ranks"] = Json::array();
  for (const auto& r : e.ranks)
    j["ranks"].push_back({{"rank", r.rank},
                          {"steps", r.steps},
                          {"step_ms", r.step_ms},
                          {"compute_share", r.compute_share},
                          {"achieved_tflops", r.achieved_tflops},
                          {"mfu", r.mfu}});
  j["copies"] = Json::array();
  for (const auto& c : e.copies)
    j["copies"].push_back({{"kind", c.kind},
                           {"count", c.count},
                           {"bytes", c.bytes},
                           {"dur_ns", c.dur_ns},
                           {"gbps", c.gbps},
                           {"ceiling_gbps", c.ceiling_gbps},
                           {"share", c.share}});
  j["best_busbw_gbps"] = e.best_busbw_gbps;
  j["best_busbw_what"] = e.best_busbw_what;
  j["p2p_gbps"] = e.p2p_gbps;
  j["missing"] = e.missing;
  j["warnings"] = e.warnings;
  return j.dump(2);
}

}  // namespace gpudoctor
