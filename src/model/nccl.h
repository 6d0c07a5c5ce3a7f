// NCCL as the job sees it, as plain data: version codes, settings (name, value, where they came
// from), this host's network devices, and the facts an NCCL_DEBUG=INFO log reveals. Sources and
// probes fill these; diagnosis judges them.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/result.h"

namespace gpudoctor {

// NCCL's version code: major*10000 + minor*100 + patch (NCCL >= 2.9 encoding), e.g. 22803.
using NcclVersion = int;

// Parses "2.28.3", "2.28", "2.28.3-1", "22803"; Error for anything else.
Result<NcclVersion> parseNcclVersion(const std::string& text);
// "2.28.3".
std::string ncclVersionString(NcclVersion v);

struct NcclSetting {
  std::string name;    // NCCL_...
  std::string value;   // unquoted
  std::string origin;  // "env", "file.sh:12", "rank0.log:40"
  bool keep = false;   // marked intentional with a trailing "# gpudoctor: keep" comment
};

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
  std::vector<std::string> interfaces;     // eth0, ib0, lo, ...
  std::vector<std::string> interfaces_up;  // operstate up (or unknown for virtual links)
  std::vector<IbDevice> ib;
  // NCCL_TOPO_FILE as probed on this host (filled by the caller that probes; empty: not probed).
  struct FileFacts {
    std::string path;
    bool exists = false, regular = false, readable = false;
    std::string head;  // the first 4 KiB
  };
  std::vector<FileFacts> files;
  // True when some InfiniBand/RoCE port is ACTIVE.
  bool any_active_ib() const;
  // The probed facts of path, or null when it was not probed.
  const FileFacts* file(const std::string& path) const;
};

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
  std::set<std::string> versions;              // "2.28.9+cuda13.0"
  std::set<std::string> networks;              // "Socket", "IB", plugin names from "Using network X"
  std::set<std::string> ib_devices;            // from "NET/IB : Using [0]mlx5_0:1/IB ..."
  std::set<std::string> socket_devices;        // from "NET/Socket : Using [0]eth0:..."
  bool ib_no_device = false;                   // "NET/IB : No device found."
  std::map<std::string, std::string> plugins;  // NET/TUNER/PROFILER/ENV -> "loaded: X" or "not found"
  std::map<std::string, int> transports;       // "P2P/CUMEM", "SHM", "NET/IB", "NET/Socket" -> connections
  int gdr_connections = 0;                     // NET transports using GPUDirect RDMA
  int net_connections = 0;
  std::map<std::string, NcclCommFacts> comms;
  std::vector<std::string> rings;               // "Channel 00/24 : 0 1" orders (first rank's view)
  int trees = 0;                                // "Trees [n] ..." entries seen
  std::map<std::string, std::string> settings;  // "set by environment" lines
  std::vector<std::string> warnings;            // NCCL WARN lines (deduplicated)
  bool nvls_available = false, nvls_unavailable = false;
  int lines = 0, nccl_lines = 0;
};

}  // namespace gpudoctor
