// Checkpointing and gradient accumulation, judged by what the job does (the job profile) against the
// memory it has: recomputing activations costs forward time that a job far from its memory limit
// need not pay, and accumulating small micro-batches costs launches and host time per sample.
#include <algorithm>

#include <fmt/format.h>

#include "diagnosis/rules/registry.h"

namespace gpudoctor {
namespace {

constexpr ThresholdDecl kMemoryHeadroom{"memory_headroom_share",
                                        0.5,
                                        0,
                                        1,
                                        "ratio",
                                        "peak memory below this share of the device's counts as room to spare "
                                        "(for dropping checkpointing or raising the micro-batch)"};

// The largest peak share of device memory over ranks with memory events; -1 unknown.
double peakShare(const Facts& f) {
  double s = -1;
  for (const auto& m : f.memory)
    if (m.device_bytes > 0) s = std::max(s, static_cast<double>(m.peak_bytes) / static_cast<double>(m.device_bytes));
  return s;
}

std::string memoryWords(const Facts& f, double share) {
  if (share < 0) return "the trace has no memory events (profile_memory=True tells whether memory needs it)";
  int64_t peak = 0, device = 0;
  for (const auto& m : f.memory)
    if (m.device_bytes > 0 && static_cast<double>(m.peak_bytes) / static_cast<double>(m.device_bytes) >= share)
      peak = m.peak_bytes, device = m.device_bytes;
  constexpr double kGiB = 1024.0 * 1024 * 1024;  // memory in GiB, as every report shows it
  return fmt::format("peak memory {:.1f} of {:.0f} GiB ({:.0f} %)", static_cast<double>(peak) / kGiB,
                     static_cast<double>(device) / kGiB, 100 * share);
}

class MemoryPlanning : public Rule {
 public:
  std::string_view id() const override { return "memory.planning"; }
  std::vector<const ThresholdDecl*> thresholds() const override { return {&kMemoryHeadroom}; }
  void evaluate(const Facts& f, const Thresholds& th, std::vector<Finding>& out) const override {
    const JobProfile& job = f.job;
    const double share = peakShare(f);
    const bool room = share >= 0 && share < th.get(kMemoryHeadroom);
    if (job.activation_checkpointing.value_or(false) && (share < 0 || room)) {
      const double r = job.recompute_share.value_or(0);
      // Forward 1, backward about 2, recompute r of the forward: its share of the GPU's compute.
      // At most the recomputed share of the compute (all of it forward) and the host's idle, where the
      // checkpoint wrapper's own host work shows.
      const double gain = f.mean.compute * r / (1 + r) + f.mean.idle_host;
      Finding x = gainFinding(f, th, "memory.recomputation",
                              fmt::format("Activation checkpointing recomputes {:.0f} % of the forward pass; {}",
                                          100 * r, memoryWords(f, share)),
                              gain,
                              "the recomputed share of the compute, all of it taken as forward, and the GPU's "
                              "idle behind the host, where the checkpoint wrapper's host work shows (upper bound)");
      x.evidence = {{"recomputed share of forward", 100 * r, "%"}, {"compute", ms(f.mean.compute), "ms/step"}};
      if (share >= 0) x.evidence.push_back({"peak memory share", 100 * share, "%"});
      x.explanation = room ? "Checkpointing trades compute for memory, and this job has memory to spare."
                           : "Checkpointing trades compute for memory; whether this job needs it, the trace "
                             "cannot tell without memory events.";
      x.fix = {"# drop torch.utils.checkpoint where memory allows, or checkpoint every other block:",
               "x = block(x)   # instead of checkpoint(block, x, use_reentrant=False)"};
      if (!room) x.severity = Severity::kInfo;
      out.push_back(std::move(x));
    }
    const int accum = job.grad_accumulation_steps.value_or(1);
    if (accum > 1 && (share < 0 || room)) {
      Finding x = gainFinding(
          f, th, "memory.accumulation",
          fmt::format("Gradient accumulation over {} micro-batches a step; {}", accum, memoryWords(f, share)),
          room ? f.share(f.mean.idle_host) > 0.3 ? f.mean.idle_host * (1 - 1.0 / accum) : 0 : 0,
          "the launch-bound idle that a larger micro-batch spreads over more samples (estimate)");
      x.evidence = {{"micro-batches per step", static_cast<double>(accum), "count"},
                    {"idle: host launch", ms(f.mean.idle_host), "ms/step"}};
      if (share >= 0) x.evidence.push_back({"peak memory share", 100 * share, "%"});
      x.explanation =
          "Each micro-batch pays the same launches and host time; where memory allows, fewer, larger "
          "micro-batches give the same global batch at less host cost per sample.";
      x.fix = {
          fmt::format("# the same global batch in fewer passes: micro_batch *= {}; accumulation_steps = 1", accum)};
      if (job.grad_scaler && f.compute_major >= 8)
        x.fix.push_back("# and bf16 autocast (this GPU has it) needs no GradScaler");
      if (!room) x.severity = Severity::kInfo;
      out.push_back(std::move(x));
    }
  }
  void checklist(const Facts& f, const Thresholds&, const std::vector<Finding>& mine,
                 std::vector<ChecklistItem>& out) const override {
    const JobProfile& job = f.job;
    const bool uses = job.activation_checkpointing.value_or(false) || job.grad_accumulation_steps.value_or(1) > 1;
    std::string evidence = uses ? fmt::format("checkpointing: {}, accumulation: {}; {}",
                                              job.activation_checkpointing.value_or(false) ? "yes" : "no",
                                              job.grad_accumulation_steps.value_or(1), memoryWords(f, peakShare(f)))
                                : "neither checkpointing nor gradient accumulation in use";
    out.push_back({"memory", "Checkpointing / accumulation where memory is short",
                   uses ? statusFrom(mine, true) : CheckStatus::kPass, evidence});
  }
};

}  // namespace

const Rule& memoryPlanningRule() {
  static const MemoryPlanning r;
  return r;
}

}  // namespace gpudoctor
