// Judging what an NCCL INFO log reveals about the communication setup (the facts come from
// sources/nccl_log): findings for `nccl log` and for analyze --nccl-log.
#pragma once
#include <string>
#include <vector>

#include "diagnosis/finding.h"
#include "model/nccl.h"

namespace gpudoctor {

// Findings (id "nccl.log"; explanation = what the log says) that matter: multi-node on sockets, GDR off, P2P unused
// inside a node, few channels, NCCL WARN lines.
std::vector<Finding> judgeNcclLog(const NcclLogFacts& f);

}  // namespace gpudoctor
