// This node's GPU topology from NVML (GPUs, NVLinks and NVSwitch links, PCIe common ancestors, CPU
// affinity) and sysfs (NUMA node and CPU list when NVML says NOT_SUPPORTED, NICs and InfiniBand HCAs
// with their PCIe distance to each GPU). The sysfs root is configurable for tests (fake trees).
#pragma once
#include <string>

#include "common/result.h"
#include "model/topology.h"

namespace gpudoctor {

struct TopologyProbeOptions {
  std::string nvml_library;  // empty: the usual search (see nvml::load)
  std::string sysfs_root;    // empty: "/"
};

// Discovers the node; an Error when NVML cannot be loaded or initialized (no driver) or has no GPUs.
Result<NodeTopology> probeTopology(const TopologyProbeOptions& opt = {});

// PCIe level between two devices from their sysfs paths (/sys/devices/pci0000:00/.../BDF): the
// same rules nvidia-smi states in its legend. Used for NIC-GPU and NIC-NIC distances.
PcieLevel sysfsPcieLevel(const std::string& path_a, const std::string& path_b, int numa_a, int numa_b);

// The PCIe switches above a device as NCCL nests them in its XML, CPU side first: from the sysfs
// path, every second bridge going up (a switch's upstream port; its downstream port and the root
// port are skipped), as NCCL's ncclTopoGetXmlFromSys walks it.
std::vector<std::string> ncclPciParents(const std::string& sysfs_path);

// NVML's bus id ("00000000:18:00.0") in sysfs form ("0000:18:00.0", lower case).
std::string normalizeBusId(const std::string& nvml_bus_id);

}  // namespace gpudoctor
