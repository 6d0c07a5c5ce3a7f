// Facts from NCCL_DEBUG=INFO logs (one file per rank, or all ranks interleaved): versions, ranks and
// nodes, the network NCCL chose, transports per channel, channel counts, rings and trees, plugins,
// NVLS, settings and warnings. Lines are matched loosely so that old (2.4+) and new (2.28) formats
// both read; anything else is skipped.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/result.h"
#include "model/nccl.h"

namespace gpudoctor {

// Reads logs; lines that are not NCCL's are ignored. Error for an unreadable file or a file with no
// NCCL lines at all.
Result<NcclLogFacts> readNcclLogs(const std::vector<std::string>& paths);
// Same, from text (tests).
Result<NcclLogFacts> readNcclLogText(const std::string& text, const std::string& name);

}  // namespace gpudoctor
