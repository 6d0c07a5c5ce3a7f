// Judging what an NCCL INFO log reveals about the communication setup (the facts come from
// sources/nccl_log): findings for `nccl log` and for analyze --nccl-log.
#pragma once
#include <string>
#include <vector>

#include "diagnosis/diagnosis.h"
#include "model/nccl.h"

namespace gpudoctor {

// A finding about the communication setup the log reveals.
struct NcclLogFinding {
  Severity severity = Severity::kInfo;  // critical, warning or info
  std::string title;
  std::string evidence;
  std::string fix;
};

// Warnings that matter: multi-node on sockets, GDR off, P2P unused inside a node, few channels,
// NCCL WARN lines.
std::vector<NcclLogFinding> judgeNcclLog(const NcclLogFacts& f);

}  // namespace gpudoctor
