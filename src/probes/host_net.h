// Network devices of this host as NCCL sees them: socket interfaces (/sys/class/net) and
// InfiniBand/RoCE HCAs with their ports (/sys/class/infiniband). The root is configurable so tests
// run against fake trees (testdata/sysroot/...).
#pragma once
#include <string>
#include <vector>

namespace gpudoctor {

struct IbPort {
  int port = 0;
  std::string state;       // "ACTIVE", "DOWN", "INIT", ... (from "4: ACTIVE")
  std::string link_layer;  // "InfiniBand" or "Ethernet" (RoCE)
};

struct IbDevice {
  std::string name;  // mlx5_0
  std::vector<IbPort> ports;
};

struct HostNet {
  std::vector<std::string> interfaces;  // eth0, ib0, lo, ...
  std::vector<std::string> interfaces_up;  // operstate up (or unknown for virtual links)
  std::vector<IbDevice> ib;
  bool any_active_ib() const;
};

// Reads ROOT/sys/class/net and ROOT/sys/class/infiniband; missing folders mean none.
HostNet probeHostNet(const std::string& root = "");

}  // namespace gpudoctor
