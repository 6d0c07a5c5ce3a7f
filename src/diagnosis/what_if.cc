#include "diagnosis/what_if.h"

#include <cmath>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "diagnosis/diagnosis.h"

namespace gpudoctor {

bool fixEdit(std::string_view fix, const Ceilings* c, ReplayEdits& ed, std::string& basis) {
  if (fix == "bf16") {
    if (!c || c->peak(GemmPrecision::kFp32) <= 0 || c->peak(GemmPrecision::kBf16) <= 0) return false;
    double bf16 = c->peak(GemmPrecision::kBf16);
    ed.kernel_scale[static_cast<size_t>(KernelClass::kGemmFp32Simt)] = c->peak(GemmPrecision::kFp32) / bf16;
    if (c->peak(GemmPrecision::kTf32) > 0)
      ed.kernel_scale[static_cast<size_t>(KernelClass::kGemmTf32)] = c->peak(GemmPrecision::kTf32) / bf16;
    for (auto k : {KernelClass::kElementwise, KernelClass::kReduction, KernelClass::kNormalization, KernelClass::kCopy,
                   KernelClass::kAttentionUnfused, KernelClass::kOptimizer})
      ed.kernel_scale[static_cast<size_t>(k)] = 0.5;
    basis = fmt::format("FP32 GEMM kernels at the BF16 / FP32 rate of {} ({:.0f} / {:.1f} TFLOP/s, each kernel's "
                        "efficiency kept), elementwise, reduction, normalization and copy kernels at half the bytes",
                        c->device, bf16, c->peak(GemmPrecision::kFp32));
    return true;
  }
  if (fix == "loader_workers") {
    ed.loader_off_thread = true;
    basis = "the in-process DataLoader's host time leaves the training thread (the workers assumed to keep up)";
    return true;
  }
  if (fix == "no_host_syncs") {
    ed.drop_sync_waits = true;
    basis = "synchronizing calls and synchronous copies inside the step stop waiting for the GPU (the step's "
            "closing synchronize stays)";
    return true;
  }
  if (fix == "pinned_copies") {
    if (!c || c->h2d_pageable_gbps <= 0 || c->h2d_pinned_gbps <= c->h2d_pageable_gbps) return false;
    ed.pageable_htod_scale = c->h2d_pageable_gbps / c->h2d_pinned_gbps;
    ed.drop_sync_waits = true;
    basis = fmt::format("pageable host-to-device copies at the pinned rate of {} ({:.1f} -> {:.1f} GB/s) and "
                        "non-blocking",
                        c->device, c->h2d_pageable_gbps, c->h2d_pinned_gbps);
    return true;
  }
  if (fix == "cuda_graphs") {
    ed.free_launches = true;
    basis = "launch calls and the host gaps between them cost nothing (the step replayed as a graph); the "
            "loader's and the syncs' host time stay";
    return true;
  }
  return false;
}

std::string_view fixOfFinding(std::string_view id) {
  if (id == "precision.fp32_gemm") return "bf16";
  if (id == "input.loader_on_critical_path") return "loader_workers";
  if (id == "sync.blocking") return "no_host_syncs";
  if (id == "input.pageable_copies") return "pinned_copies";
  if (id == "launch.overhead") return "cuda_graphs";
  return "";
}

void predictFixes(const RunAnalysis& run, const Ceilings* c, Diagnosis& d) {
  // Every replay at once: the traced graph, the un-profiled job, and one per editable fix.
  ReplayEdits unprofiled;
  unprofiled.host_event_overhead_ns = kProfilerHostEventNs;
  std::vector<ReplayEdits> edits = {ReplayEdits{}, unprofiled};
  std::vector<std::pair<Finding*, std::string>> predicted;  // finding, basis
  for (Finding& f : d.findings) {
    std::string_view fix = fixOfFinding(f.id);
    if (fix.empty()) continue;
    ReplayEdits ed = unprofiled;
    std::string basis;
    if (!fixEdit(fix, c, ed, basis)) continue;
    edits.push_back(ed);
    predicted.push_back({&f, basis});
  }
  std::vector<Replay> r = replayRunAll(run, edits);
  const Replay& traced = r[0];
  const Replay& base = r[1];
  if (!traced.available) {
    d.what_if.basis = traced.reason;
    return;
  }
  if (!base.available || base.replayed_step_ns <= 0) {
    d.what_if.basis = base.reason;
    return;
  }
  d.what_if.available = true;
  d.what_if.traced_step_ns = std::llround(traced.traced_step_ns);
  d.what_if.replayed_step_ns = std::llround(traced.replayed_step_ns);
  d.what_if.unprofiled_step_ns = std::llround(base.replayed_step_ns);
  d.what_if.basis = fmt::format(
      "dependency-graph replay of every host call and GPU operation (worst step off the trace by {:.2f} %); "
      "un-profiled: {:.1f} us of profiler cost per recorded host event removed (fitted on 31 measured traces: "
      "median error 6.0 %, worst 46 %)",
      100 * traced.worst_error, kProfilerHostEventNs / 1e3);
  for (size_t k = 0; k < predicted.size(); ++k) {
    const Replay& e = r[2 + k];
    if (!e.available || e.replayed_step_ns <= 0) continue;
    Finding& f = *predicted[k].first;
    f.what_if.available = true;
    f.what_if.step_ns = std::llround(e.replayed_step_ns);
    f.what_if.speedup = base.replayed_step_ns / e.replayed_step_ns;
    f.what_if.basis = predicted[k].second + "; replayed";
  }
}

}  // namespace gpudoctor
