// Network devices of this host as NCCL sees them: socket interfaces (/sys/class/net) and
// InfiniBand/RoCE HCAs with their ports (/sys/class/infiniband). The root is configurable so tests
// run against fake trees (testdata/sysroot/...).
#pragma once
#include <string>
#include <vector>

#include "model/nccl.h"

namespace gpudoctor {

// Reads ROOT/sys/class/net and ROOT/sys/class/infiniband; missing folders mean none.
HostNet probeHostNet(const std::string& root = "");

// Adds to host.files what NCCL would find at each path-valued setting (NCCL_TOPO_FILE): exists,
// regular, readable and its first 4 KiB. A FIFO or device is never opened (it could block).
void probeSettingFiles(HostNet& host, const std::vector<NcclSetting>& settings);

}  // namespace gpudoctor
