// The communication setup the job's NCCL INFO logs reveal (sockets between nodes, GDR off, P2P
// unused, few channels, NCCL warnings), one finding each (diagnosis/nccl_log_check judges the log).
// Their cost is not in the trace, so no gain.
#include <fmt/format.h>

#include "diagnosis/rules/registry.h"

namespace gpudoctor {
namespace {

class NcclLog : public Rule {
 public:
  std::string_view id() const override { return "nccl.log"; }
  void evaluate(const Facts& f, const Thresholds& th, std::vector<Finding>& out) const override {
    for (const auto& l : f.nccl_log) {
      Finding x =
          gainFinding(f, th, "nccl.log", l.title, 0, "not estimated from the trace: measure with gpudoctor nccl bench");
      x.severity = l.severity;
      x.explanation = l.explanation;
      x.fix = l.fix;
      out.push_back(std::move(x));
    }
  }
  void checklist(const Facts& f, const Thresholds&, const std::vector<Finding>&,
                 std::vector<ChecklistItem>& out) const override {
    CheckStatus st = CheckStatus::kUnknown;
    std::string ev = "pass --nccl-log FILE... (NCCL_DEBUG=INFO) to check transports and channels";
    if (f.has_nccl_log) {
      int bad = 0;
      for (const auto& l : f.nccl_log) bad += l.severity != Severity::kInfo;
      st = bad ? CheckStatus::kFail : CheckStatus::kPass;
      ev = bad ? fmt::format("{} problem(s) in the NCCL log", bad) : "NCCL log: transports and channels as expected";
    }
    out.push_back({"communication", "NCCL transports as expected (IB/NVLink, GDR, channels)", st, ev});
  }
};

}  // namespace

const Rule& ncclLogRule() {
  static const NcclLog r;
  return r;
}

}  // namespace gpudoctor
