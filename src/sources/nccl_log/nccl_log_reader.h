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

namespace gpudoctor {

struct NcclCommFacts {
  std::string id;  // commId when logged, else "comm#N"
  int nranks = -1, nnodes = -1, local_ranks = -1;
  int coll_channels = -1, nvls_channels = -1, p2p_channels = -1, collnet_channels = -1;
  std::set<int> ranks_seen;
  std::set<std::string> hosts;
  bool init_complete = false;
  double init_seconds = -1;  // largest "Init timings ... total" among ranks
};

struct NcclLogFacts {
  std::set<std::string> versions;        // "2.28.9+cuda13.0"
  std::set<std::string> networks;        // "Socket", "IB", plugin names from "Using network X"
  std::set<std::string> ib_devices;      // from "NET/IB : Using [0]mlx5_0:1/IB ..."
  std::set<std::string> socket_devices;  // from "NET/Socket : Using [0]eth0:..."
  bool ib_no_device = false;             // "NET/IB : No device found."
  std::map<std::string, std::string> plugins;  // NET/TUNER/PROFILER/ENV -> "loaded: X" or "not found"
  std::map<std::string, int> transports;  // "P2P/CUMEM", "SHM", "NET/IB", "NET/Socket" -> connections
  int gdr_connections = 0;                // NET transports using GPUDirect RDMA
  int net_connections = 0;
  std::map<std::string, NcclCommFacts> comms;
  std::vector<std::string> rings;         // "Channel 00/24 : 0 1" orders (first rank's view)
  int trees = 0;                          // "Trees [n] ..." entries seen
  std::map<std::string, std::string> settings;  // "set by environment" lines
  std::vector<std::string> warnings;      // NCCL WARN lines (deduplicated)
  bool nvls_available = false, nvls_unavailable = false;
  int lines = 0, nccl_lines = 0;
};

// Reads logs; lines that are not NCCL's are ignored. Error for an unreadable file or a file with no
// NCCL lines at all.
Result<NcclLogFacts> readNcclLogs(const std::vector<std::string>& paths);
// Same, from text (tests).
Result<NcclLogFacts> readNcclLogText(const std::string& text, const std::string& name);

}  // namespace gpudoctor
