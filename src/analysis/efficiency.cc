#include "analysis/efficiency.h"

#include "common/saturating.h"

#include <fmt/format.h>

namespace gpudoctor {

namespace {

std::optional<GemmPrecision> gemmPrecision(KernelClass c) {
  switch (c) {
    case KernelClass::kGemmFp32Simt:
      return GemmPrecision::kFp32;
    case KernelClass::kGemmTf32:
      return GemmPrecision::kTf32;
    case KernelClass::kGemmFp16:
      return GemmPrecision::kFp16;
    case KernelClass::kGemmBf16:
      return GemmPrecision::kBf16;
    case KernelClass::kGemmFp8:
      return GemmPrecision::kFp8;
    default:
      return std::nullopt;
  }
}

}  // namespace

std::optional<GemmPrecision> dominantGemmPrecision(const KernelSummary& k, double* share) {
  int64_t total = 0, best = 0;
  std::optional<GemmPrecision> p;
  for (const auto& c : k.classes) {
    if (!isGemm(c.cls)) continue;
    total += c.dur.total_ns;
    if (auto q = gemmPrecision(c.cls); q && c.dur.total_ns > best) {
      best = c.dur.total_ns;
      p = q;
    }
  }
  if (share) *share = total > 0 ? static_cast<double>(best) / static_cast<double>(total) : 0;
  return p;
}

Efficiency computeEfficiency(const RunAnalysis& run, const Ceilings& c, const EfficiencyOptions& opt) {
  Efficiency e;
  e.ceilings_device = c.device;
  e.flops_per_step = opt.flops_per_step;
  double share = 0;
  if (opt.precision) {
    e.precision = *opt.precision;
    e.precision_reason = "given";
  } else if (auto p = dominantGemmPrecision(run.kernels, &share)) {
    e.precision = *p;
    e.precision_reason = fmt::format("most GEMM kernel time is {} ({:.0f} %)", gemmPrecisionName(*p), 100 * share);
  } else {
    e.precision = GemmPrecision::kBf16;
    e.precision_reason = "no GEMM kernel of known precision in the trace; bf16 assumed";
  }
  e.peak_tflops = c.peak(e.precision);
  if (e.peak_tflops <= 0)
    e.missing.push_back(fmt::format("MFU: the ceilings file has no {} TFLOP/s", gemmPrecisionName(e.precision)));
  if (opt.flops_per_step <= 0)
    e.missing.push_back(
        "MFU: the trace does not record FLOPs; give --flops-per-step (per rank; training ≈ 6 × parameters × tokens per "
        "step per rank)");
  double mfu_sum = 0;
  int mfu_n = 0;
  for (const auto& r : run.ranks) {
    RankEfficiency re;
    re.rank = r.trace ? r.trace->rank : -1;
    re.steps = static_cast<int64_t>(r.steps.size());
    if (re.steps > 0 && r.total.wall_ns > 0) {
      double step_s = static_cast<double>(r.total.wall_ns) / 1e9 / static_cast<double>(re.steps);
      re.step_ms = step_s * 1e3;
      re.compute_share = static_cast<double>(r.total.compute_ns) / static_cast<double>(r.total.wall_ns);
      if (opt.flops_per_step > 0) {
        re.achieved_tflops = opt.flops_per_step / step_s / 1e12;
        if (e.peak_tflops > 0) {
          re.mfu = re.achieved_tflops / e.peak_tflops;
          mfu_sum += re.mfu;
          ++mfu_n;
        }
      }
    }
    e.ranks.push_back(re);
  }
  e.mean_mfu = mfu_n ? mfu_sum / mfu_n : 0;
  for (const auto& r : e.ranks)
    if (r.mfu > 1) {
      e.warnings.push_back(
          fmt::format("MFU above 100 % (rank {}: {:.0f} %): --flops-per-step is too high, or the ceilings "
                      "are not this GPU's",
                      r.rank, 100 * r.mfu));
      break;
    }
  // Ceilings of another GPU make every ratio meaningless: compare with the trace's deviceProperties.
  for (const auto& r : run.ranks) {
    if (!r.trace || r.trace->devices.empty() || c.device.empty()) continue;
    const std::string& name = r.trace->devices.front().name;
    if (!name.empty() && c.device.find(name) == std::string::npos && name.find(c.device) == std::string::npos) {
      e.warnings.push_back("the trace ran on " + name + " but the ceilings are of " + c.device);
      break;
    }
  }
  // Copies summed over ranks: achieved rate while copying, against the ceiling of that path.
  struct Kind {
    const char* name;
    CopyStats StepBreakdown::*field;
    double ceiling;
  };
  const Kind kinds[] = {{"h2d pinned", &StepBreakdown::pinned_htod, c.h2d_pinned_gbps},
                        {"h2d pageable", &StepBreakdown::pageable_htod, c.h2d_pageable_gbps},
                        {"d2h pinned", &StepBreakdown::pinned_dtoh, c.d2h_pinned_gbps},
                        {"d2h pageable", &StepBreakdown::pageable_dtoh, c.d2h_pageable_gbps}};
  for (const auto& k : kinds) {
    CopyEfficiency ce;
    ce.kind = k.name;
    for (const auto& r : run.ranks) {
      const CopyStats& s = r.total.*k.field;
      ce.count += s.count;
      addSaturating(ce.bytes, s.bytes);
      ce.dur_ns += s.dur_ns;
    }
    if (ce.count == 0 || ce.dur_ns <= 0) continue;
    ce.gbps = static_cast<double>(ce.bytes) / static_cast<double>(ce.dur_ns);  // bytes/ns = GB/s
    ce.ceiling_gbps = k.ceiling;
    ce.share = k.ceiling > 0 ? ce.gbps / k.ceiling : 0;
    if (k.ceiling <= 0) e.missing.push_back(std::string(k.name) + " copies: the ceilings file has no figure for them");
    e.copies.push_back(ce);
  }
  e.p2p_gbps = c.p2p_gbps;
  for (const auto& col : run.collectives)
    if (col.busbw_gbps > e.best_busbw_gbps) {
      e.best_busbw_gbps = col.busbw_gbps;
      e.best_busbw_what = fmt::format("{} {} B", col.collective, col.bytes);
    }
  if (e.best_busbw_gbps > 0 && c.p2p_gbps <= 0)
    e.missing.push_back("NCCL: the ceilings file has no p2p figure (measured with two or more GPUs)");
  return e;
}

}  // namespace gpudoctor
