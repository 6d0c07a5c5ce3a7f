// NCCL time no computation hides, above the guide's communication share.
#include <fmt/format.h>

#include "diagnosis/rules/fixes.h"
#include "diagnosis/rules/registry.h"

namespace gpudoctor {
namespace {

class ExposedCommunication : public Rule {
 public:
  std::string_view id() const override { return "communication.exposed"; }
  std::vector<const ThresholdDecl*> thresholds() const override { return {&guide::kCommShareMax}; }
  void evaluate(const Facts& f, const Thresholds& th, std::vector<Finding>& out) const override {
    double exposed = f.share(f.mean.comm_exposed), max = th.get(guide::kCommShareMax);
    if (exposed <= max) return;
    if (f.job.data_parallel == "fsdp" || f.job.data_parallel == "zero") return;  // communication.fsdp's
    Finding x = gainFinding(
        f, th, "communication.exposed",
        fmt::format("Exposed communication is {:.1f}% of the step (guide: < {:.0f}%)", pct(exposed), pct(max)),
        f.mean.comm_exposed, "exposed NCCL time per step (upper bound: perfect overlap)");
    x.evidence = {{"NCCL", ms(f.mean.comm), "ms/step"},
                  {"overlapped", ms(f.mean.comm - f.mean.comm_exposed), "ms/step"},
                  {"exposed", ms(f.mean.comm_exposed), "ms/step"}};
    x.explanation =
        "NCCL kernels run while no compute kernel does. NCCL time also includes waiting for the "
        "slowest rank: see the straggler finding before tuning NCCL.";
    x.fix = fixes::communication();
    out.push_back(std::move(x));
  }
  void checklist(const Facts& f, const Thresholds& th, const std::vector<Finding>& mine,
                 std::vector<ChecklistItem>& out) const override {
    double max = th.get(guide::kCommShareMax);
    CheckStatus st = f.ranks > 1 || f.mean.comm > 0
                         ? (f.share(f.mean.comm_exposed) <= max ? CheckStatus::kPass : CheckStatus::kFail)
                         : CheckStatus::kUnknown;
    out.push_back({"communication", fmt::format("Exposed communication < {:.0f}% of the step", pct(max)), st,
                   fmt::format("exposed NCCL {:.1f}% of the step", pct(f.share(f.mean.comm_exposed)))});
  }
};

}  // namespace

const Rule& exposedCommunicationRule() {
  static const ExposedCommunication r;
  return r;
}

}  // namespace gpudoctor
