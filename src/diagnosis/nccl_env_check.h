// Judges NCCL settings against the variable table, the installed NCCL version and this host:
// each setting is fine, ignored by NCCL (unknown, removed, too new, cannot take effect), wrong
// (bad value, deprecated name, inconsistent pair, absent device) or slow (forces one algorithm or
// protocol, caps channels, debug output left on), or intentional when the user marked it so.
#pragma once
#include <set>
#include <string>
#include <vector>

#include "diagnosis/nccl_env_table.h"
#include "model/nccl.h"

namespace gpudoctor {

enum class EnvVerdict { kIgnored, kWrong, kSlow, kFine, kIntentional };
std::string_view envVerdictName(EnvVerdict v);

struct EnvFinding {
  std::string name, value, origin;
  EnvVerdict verdict = EnvVerdict::kFine;
  std::string reason;
  std::string fix;  // a concrete line, or empty
};

struct EnvCheckOptions {
  NcclVersion version = 0;        // installed/target NCCL; 0: unknown (version checks skipped)
  const HostNet* host = nullptr;  // null: host checks skipped
  bool multi_node = false;        // the job spans nodes (enables network advice)
  std::set<std::string> keep;     // names the user marked intentional (--keep)
};

// One finding per problem, and one "fine" finding for a setting with none; in input order.
std::vector<EnvFinding> checkNcclEnv(const std::vector<NcclSetting>& settings, const NcclVarTable& table,
                                     const EnvCheckOptions& opt);

}  // namespace gpudoctor
