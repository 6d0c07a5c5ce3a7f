// Host-to-device copies from pageable memory: staged and synchronous, where pinned ones run async.
#include <algorithm>

#include <fmt/format.h>

#include "diagnosis/rules/registry.h"

namespace gpudoctor {
namespace {

// Pageable copies this small (mean bytes a copy: a few scalars) carry Python data, not batches (a batch
// of 32 int64 labels is already 256 B): a constant built with torch.tensor(..., device="cuda") inside
// the loop, whose copy waits for the GPU's queue.
constexpr double kSmallCopyBytes = 256;

class PageableCopies : public Rule {
 public:
  std::string_view id() const override { return "input.pageable_copies"; }
  void evaluate(const Facts& f, const Thresholds& th, std::vector<Finding>& out) const override {
    const auto& m = f.mean;
    if (m.pageable_htod_count <= 0) return;
    Finding x = gainFinding(
        f, th, "input.pageable_copies",
        fmt::format("{:.0f} host-to-device copies per step come from pageable memory", m.pageable_htod_count),
        std::min(m.wall, m.pageable_htod_ns + std::max(0.0, m.wall - m.busy)),
        "time of pageable host-to-device copies and the GPU's idle that their blocking causes: "
        "the GPU's other work stays (upper bound)");
    x.evidence = {{"pageable HtoD copies", m.pageable_htod_count, "per step"},
                  {"pinned HtoD copies", m.pinned_htod_count, "per step"},
                  {"pageable copy time", ms(m.pageable_htod_ns), "ms/step"}};
    // Which operators issued them, where the host blocked in them (the job profile's syncs): where to look.
    for (const HostSync& s : f.job.host_syncs)
      if (s.copy.rfind("HtoD pageable", 0) == 0 && !s.op.empty())
        x.evidence.push_back(
            {fmt::format("issued by {} {}", s.op, s.caller.empty() ? "in the step itself" : "in " + s.caller),
             s.count_per_step, "per step"});
    x.explanation = "Copies from pageable memory are staged and synchronous; pinned memory copies run async.";
    x.fix = {"DataLoader(..., pin_memory=True)", "x = x.cuda(non_blocking=True)"};
    if (m.pageable_htod_bytes > 0 && m.pageable_htod_bytes < kSmallCopyBytes * m.pageable_htod_count) {
      x.evidence.push_back({"pageable bytes per copy", m.pageable_htod_bytes / m.pageable_htod_count, "B"});
      x.explanation +=
          " These copies are small: Python data copied each step (a constant built with "
          "torch.tensor(..., device=\"cuda\") inside the loop), each waiting for the GPU's queue.";
      x.fix = {"# build such constants once, outside the loop (a module buffer, or a tensor made before it):",
               "mean = torch.tensor(MEAN, device=\"cuda\")  # once; then reuse `mean` every step"};
    }
    out.push_back(std::move(x));
  }
  void checklist(const Facts& f, const Thresholds&, const std::vector<Finding>&,
                 std::vector<ChecklistItem>& out) const override {
    const auto& m = f.mean;
    out.push_back({"io", "Pinned host memory for copies",
                   m.pageable_htod_count + m.pinned_htod_count > 0
                       ? (m.pageable_htod_count > 0 ? CheckStatus::kFail : CheckStatus::kPass)
                       : CheckStatus::kUnknown,
                   fmt::format("{:.0f} pageable, {:.0f} pinned host-to-device copies per step", m.pageable_htod_count,
                               m.pinned_htod_count)});
  }
};

}  // namespace

const Rule& pageableCopiesRule() {
  static const PageableCopies r;
  return r;
}

}  // namespace gpudoctor
