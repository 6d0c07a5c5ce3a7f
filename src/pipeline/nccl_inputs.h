// The job's NCCL files analyze is given (--nccl-env settings, --nccl-log logs), read and judged as
// `nccl env` and `nccl log` judge them, for the diagnosis of a run.
#pragma once
#include <string>
#include <vector>

#include "diagnosis/finding.h"
#include "diagnosis/nccl_env_check.h"
#include "model/trace.h"

namespace gpudoctor {

struct NcclJudged {
  std::vector<EnvFinding> env;
  std::vector<Finding> log;
};

// Judges the files given (an empty path or list: not judged); "" or the error. The settings are
// judged against the NCCL the traces recorded, else the one installed here.
std::string judgeNcclFiles(const std::string& nccl_env, const std::vector<std::string>& nccl_logs,
                           const std::vector<RankTrace>& traces, NcclJudged& out);

}  // namespace gpudoctor
