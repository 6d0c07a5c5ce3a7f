#include "diagnosis/nccl_log_check.h"

#include <algorithm>

#include <fmt/format.h>

namespace gpudoctor {

namespace {

// A finding about the communication setup: `evidence` is what the log says, `fix` one line (or none).
void add(std::vector<Finding>& out, Severity severity, std::string title, std::string evidence, std::string fix) {
  Finding x;
  x.id = "nccl.log";
  x.severity = severity;
  x.title = std::move(title);
  x.explanation = std::move(evidence);
  if (!fix.empty()) x.fix = {std::move(fix)};
  out.push_back(std::move(x));
}

}  // namespace

std::vector<Finding> judgeNcclLog(const NcclLogFacts& f) {
  std::vector<Finding> out;
  int max_nodes = 0;
  for (const auto& [id, c] : f.comms) max_nodes = std::max(max_nodes, c.nnodes);
  bool socket = f.networks.count("Socket") > 0;
  if (max_nodes > 1 && socket && f.ib_devices.empty())
    add(out, Severity::kCritical, "Multi-node communicators run over TCP sockets",
        fmt::format("{} nodes; network Socket{}", max_nodes, f.ib_no_device ? "; NET/IB: no device found" : ""),
        "install/enable the RDMA NIC driver and NCCL's IB (or the vendor's net plugin); check NCCL_IB_DISABLE");
  if (f.net_connections > 0 && f.transports.count("NET/IB") && f.gdr_connections == 0)
    add(out, Severity::kWarning, "InfiniBand without GPUDirect RDMA: network traffic is staged through host memory",
        fmt::format("{} NET/IB connections, 0 with GDRDMA", f.transports.at("NET/IB")),
        "load nvidia-peermem (or use dma-buf), and check NCCL_NET_GDR_LEVEL / PCIe topology");
  int p2p = 0, shm = 0;
  for (const auto& [k, n] : f.transports) {
    if (k.rfind("P2P", 0) == 0) p2p += n;
    if (k == "SHM") shm += n;
  }
  if (shm > 0 && p2p == 0)
    add(out, Severity::kWarning, "GPUs of a node talk through host shared memory, not P2P (NVLink/PCIe)",
        fmt::format("{} SHM connections, 0 P2P", shm),
        "check NCCL_P2P_DISABLE / NCCL_P2P_LEVEL, IOMMU/ACS settings, and nvidia-smi topo -m");
  for (const auto& [id, c] : f.comms)
    if (c.coll_channels >= 0 && c.coll_channels < 4 && c.local_ranks > 1)
      add(out, Severity::kWarning,
          fmt::format("Communicator {} uses only {} collective channels", id.substr(0, 18), c.coll_channels),
          fmt::format("{} ranks on {} node(s)", c.nranks, c.nnodes),
          "check NCCL_MAX_CTAS / NCCL_MAX_NCHANNELS and NCCL_NTHREADS");
  if (f.settings.count("NCCL_NVLS_ENABLE") && f.settings.at("NCCL_NVLS_ENABLE") == "0")
    add(out, Severity::kInfo, "NVLS (NVLink SHARP) is disabled by NCCL_NVLS_ENABLE=0", "set by environment",
        "intended where multicast is forbidden; otherwise unset it on NVSwitch systems");
  for (const auto& w : f.warnings)
    add(out, Severity::kWarning, "NCCL warned: " + w.substr(0, 160), "NCCL WARN line", "");
  return out;
}

}  // namespace gpudoctor
