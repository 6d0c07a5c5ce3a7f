#include "pipeline/nccl_inputs.h"

#include "diagnosis/nccl_env_table.h"
#include "diagnosis/nccl_log_check.h"
#include "model/nccl.h"
#include "probes/nccl_library.h"
#include "sources/nccl_env/settings_reader.h"
#include "sources/nccl_log/nccl_log_reader.h"

namespace gpudoctor {

std::string judgeNcclFiles(const std::string& nccl_env, const std::vector<std::string>& nccl_logs,
                           const std::vector<RankTrace>& traces, NcclJudged& out) {
  if (!nccl_env.empty()) {
    auto settings = readNcclSettingsFile(nccl_env);
    if (!settings.ok()) return settings.error().message;
    // Judged against the installed NCCL when there is one; the host checks are left to `nccl env`
    // on the job's own machine (this may not be it).
    // The job's NCCL is the one its traces recorded (distributedInfo); else the one installed here.
    EnvCheckOptions eo;
    for (const auto& t : traces)
      if (auto v = parseNcclVersion(t.nccl_version); v.ok()) eo.version = v.value();
    if (!eo.version) {
      InstalledNccl lib = probeInstalledNccl();
      if (lib.found) eo.version = lib.version;
    }
    out.env = checkNcclEnv(settings.value(), NcclVarTable::builtin(), eo);
  }
  if (!nccl_logs.empty()) {
    auto facts = readNcclLogs(nccl_logs);
    if (!facts.ok()) return facts.error().message;
    out.log = judgeNcclLog(facts.value());
  }
  return "";
}

}  // namespace gpudoctor
