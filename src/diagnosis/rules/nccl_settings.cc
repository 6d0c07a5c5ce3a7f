// The job's NCCL settings (--nccl-env) as `nccl env` judges them: ignored, wrong or slow ones.
#include <fmt/format.h>

#include "diagnosis/rules/registry.h"

namespace gpudoctor {
namespace {

class NcclSettings : public Rule {
 public:
  std::string_view id() const override { return "nccl.settings"; }
  void evaluate(const Facts& f, const Thresholds& th, std::vector<Finding>& out) const override {
    if (!f.has_nccl_env) return;
    int ignored = 0, wrong = 0, slow = 0;
    std::vector<std::string> fixes;
    for (const auto& e : f.nccl_env) {
      if (e.verdict == EnvVerdict::kIgnored)
        ++ignored;
      else if (e.verdict == EnvVerdict::kWrong)
        ++wrong;
      else if (e.verdict == EnvVerdict::kSlow)
        ++slow;
      else
        continue;
      fixes.push_back(fmt::format("{}={}  ->  {} ({})", e.name, e.value,
                                  e.fix.empty() ? "see gpudoctor nccl env" : e.fix, envVerdictName(e.verdict)));
    }
    if (ignored + wrong + slow == 0) return;
    Finding x = gainFinding(f, th, "nccl.settings",
                            fmt::format("NCCL settings: {} ignored by NCCL, {} wrong, {} slow", ignored, wrong, slow),
                            0, "not estimated: measure with nccl-tests or gpudoctor before and after");
    x.severity = slow + wrong > 0 ? Severity::kWarning : Severity::kInfo;
    x.evidence = {{"ignored", static_cast<double>(ignored), "settings"},
                  {"wrong", static_cast<double>(wrong), "settings"},
                  {"slow", static_cast<double>(slow), "settings"}};
    x.explanation = "Settings NCCL silently ignores do nothing; wrong or slow ones change its choices for the worse.";
    x.fix = std::move(fixes);
    out.push_back(std::move(x));
  }
  void checklist(const Facts& f, const Thresholds&, const std::vector<Finding>& mine,
                 std::vector<ChecklistItem>& out) const override {
    out.push_back({"communication", "NCCL settings valid for this NCCL and host",
                   f.has_nccl_env ? statusFrom(mine, true) : CheckStatus::kUnknown,
                   f.has_nccl_env
                       ? fmt::format("{} settings checked", f.nccl_env.size())
                       : "pass --nccl-env FILE (or run gpudoctor nccl env) to check the job's NCCL settings"});
  }
};

}  // namespace

const Rule& ncclSettingsRule() {
  static const NcclSettings r;
  return r;
}

}  // namespace gpudoctor
