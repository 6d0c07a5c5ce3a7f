// Rendering of `nccl env` findings: a terminal table (100 columns) and JSON. Computes nothing.
#pragma once
#include <string>
#include <vector>

#include "diagnosis/nccl_env_check.h"

namespace gpudoctor {

struct NcclEnvContext {
  std::string source;        // "the environment" or the files read
  std::string version_note;  // "NCCL 2.28.3 (/usr/lib/...)" or why unknown
  std::string version;       // "2.28.3" or ""
  std::string library;
  size_t settings = 0;
  bool host_checked = true;
  std::string host_note;  // why the host checks were skipped
  bool multi_node = false;
};

std::string renderNcclEnvText(const std::vector<EnvFinding>& f, const NcclEnvContext& c);
std::string renderNcclEnvJson(const std::vector<EnvFinding>& f, const NcclEnvContext& c);

}  // namespace gpudoctor
