#include "diagnosis/rule.h"

namespace gpudoctor {

std::string_view severityName(Severity s) {
  switch (s) {
    case Severity::kCritical:
      return "critical";
    case Severity::kWarning:
      return "warning";
    case Severity::kInfo:
      return "info";
    case Severity::kOk:
      return "ok";
  }
  return "info";
}

std::string_view checkStatusName(CheckStatus s) {
  switch (s) {
    case CheckStatus::kPass:
      return "pass";
    case CheckStatus::kFail:
      return "fail";
    case CheckStatus::kUnknown:
      return "not measurable";
  }
  return "not measurable";
}

Finding gainFinding(const Facts& f, const Thresholds& th, std::string id, std::string title, double gain_ns,
                    std::string basis) {
  Finding x;
  x.id = std::move(id);
  x.title = std::move(title);
  x.gain_ms_per_step = ms(gain_ns);
  x.gain_share = f.share(gain_ns);
  x.gain_basis = std::move(basis);
  x.severity = x.gain_share >= th.get(kCriticalGainShare) ? Severity::kCritical
               : x.gain_share >= th.get(kMinGainShare)    ? Severity::kWarning
                                                          : Severity::kInfo;
  return x;
}

CheckStatus statusFrom(const std::vector<Finding>& mine, bool measurable) {
  if (!measurable) return CheckStatus::kUnknown;
  for (const auto& f : mine)
    if (f.severity != Severity::kOk && f.severity != Severity::kInfo) return CheckStatus::kFail;
  return CheckStatus::kPass;
}

}  // namespace gpudoctor
