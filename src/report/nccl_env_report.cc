#include "report/nccl_env_report.h"

#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/text.h"

namespace gpudoctor {

std::string renderNcclEnvText(const std::vector<EnvFinding>& findings, const NcclEnvContext& c) {
  std::string o = wrapText(fmt::format("gpudoctor nccl env: {} setting{} from {}; {}", c.settings,
                                       c.settings == 1 ? "" : "s", c.source, c.version_note),
                           "", textWidth());
  if (!c.host_checked)
    o += wrapText(c.host_note.empty() ? std::string("host checks skipped (--no-host)") : c.host_note, "", textWidth());
  if (c.settings == 0) o += "no NCCL_* settings: NCCL uses its defaults (usually the right start)\n";
  std::map<EnvVerdict, int> count;
  for (const auto& f : findings) {
    ++count[f.verdict];
    std::string nv = f.name + "=" + f.value;
    if (nv.size() > 38) nv = nv.substr(0, 35) + "...";
    o += fmt::format("  {:<38} {:<11}\n", nv, envVerdictName(f.verdict));
    o.pop_back();
    std::string body = wrapText(f.reason, std::string(53, ' '), textWidth());
    o += body.empty() ? "\n" : body.substr(52);
    if (!f.fix.empty()) o += pasteBlock({f.fix}, "    ");
  }
  if (!findings.empty())
    o += fmt::format("{} ignored by NCCL, {} wrong, {} slow, {} fine, {} intentional\n", count[EnvVerdict::kIgnored],
                     count[EnvVerdict::kWrong], count[EnvVerdict::kSlow], count[EnvVerdict::kFine],
                     count[EnvVerdict::kIntentional]);
  return o;
}

std::string renderNcclEnvJson(const std::vector<EnvFinding>& findings, const NcclEnvContext& c) {
  nlohmann::ordered_json j;
  j["tool"] = "gpudoctor nccl env";
  j["schema_version"] = 1;  // bumped when a field changes meaning or goes away
  j["source"] = c.source;
  j["nccl_version"] = c.version;
  j["nccl_library"] = c.library;
  j["host_checked"] = c.host_checked;
  j["multi_node"] = c.multi_node;
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (const auto& f : findings)
    arr.push_back({{"name", f.name},
                   {"value", f.value},
                   {"origin", f.origin},
                   {"verdict", envVerdictName(f.verdict)},
                   {"reason", f.reason},
                   {"fix", f.fix}});
  j["findings"] = arr;
  return j.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace gpudoctor
