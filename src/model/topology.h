// Plain data for GPU topology: one node (GPUs, NVLinks, PCIe levels, NUMA nodes, NICs) and a cluster
// (hosts with free GPUs under a leaf/spine switch tree). Filled by the topology probe (NVML + sysfs)
// or loaded from a file, so placement is planned and tested without the hardware.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gpudoctor {

// PCIe path between two devices, by their closest common ancestor. Values are NVML's
// nvmlGpuTopologyLevel_t (INTERNAL 0 ... SYSTEM 50), so a probe stores what NVML returns as is.
enum class PcieLevel : int {
  kInternal = 0,     // same board (multi-GPU board)
  kSingle = 10,      // PIX: one PCIe switch
  kMultiple = 20,    // PXB: several switches, no host bridge
  kHostBridge = 30,  // PHB: through a CPU's host bridge
  kNode = 40,        // NODE: across host bridges of one NUMA node
  kSystem = 50,      // SYS: across NUMA nodes (the CPU interconnect)
};

// The nvidia-smi topo -m legend of a level: PIX, PXB, PHB, NODE, SYS (its legend has no entry for
// INTERNAL, two GPUs of one board behind one switch, so that prints as PIX).
const char* pcieLevelName(PcieLevel l);
// Parses a legend name (PIX, PXB, PHB, NODE, SYS, or NVML's SINGLE, MULTIPLE, HOSTBRIDGE, SYSTEM,
// INTERNAL); false when unknown.
bool parsePcieLevel(const std::string& s, PcieLevel* out);

struct TopoGpu {
  int index = 0;                          // CUDA/NVML index on the node
  std::string name;                       // "NVIDIA H200"
  std::string uuid;                       // "GPU-..."
  std::string pci_bus_id;                 // "0000:18:00.0" (sysfs form)
  std::vector<std::string> pci_switches;  // PCIe switches above it, CPU side first, as NCCL nests them
                                          // (upstream ports' bus ids, from sysfs); empty: unknown
  int numa_node = -1;                     // -1: unknown
  std::string cpu_list;                   // "0-47,96-143"; empty: unknown
  int sm = 0;                             // compute capability x 10 (90 for Hopper); 0: unknown
  int nvswitch_links = 0;                 // NVLinks into an NVSwitch fabric
  int pcie_gen = 0, pcie_width = 0;       // the GPU's own PCIe link, 0: unknown
  std::vector<int> pids;                  // compute processes running on it when probed (NVML); a topology file: none
};

struct TopoNic {
  std::string name;                       // mlx5_0 (IB/RoCE HCA) or eth0
  std::string pci_bus_id;                 // may be empty (virtual)
  std::vector<std::string> pci_switches;  // as TopoGpu::pci_switches
  int numa_node = -1;
  bool infiniband = false;  // an RDMA device (/sys/class/infiniband)
  int port = 1;
  double speed_gbps = 0;                // link speed, Gbit/s; 0: unknown
  std::vector<PcieLevel> level_to_gpu;  // per GPU index
  std::vector<PcieLevel> level_to_nic;  // per NIC (position in NodeTopology::nics); may be empty
};

struct NumaNode {
  int id = 0;
  std::string cpu_list;
};

// One node's topology. Matrices are indexed by position in `gpus` (== GPU index).
struct NodeTopology {
  std::string name;
  std::string source;  // file or "nvml" (for messages)
  std::vector<TopoGpu> gpus;
  std::vector<std::vector<int>> nvlinks;     // direct GPU-GPU NVLinks per pair (symmetric)
  std::vector<std::vector<PcieLevel>> pcie;  // PCIe level per pair (symmetric; diagonal unused)
  std::vector<NumaNode> numa;
  std::vector<TopoNic> nics;
  double nvlink_gbps = 25;           // per link and direction (NVLink 2-4: 25 GB/s; NVLink 5: 50)
  double pcie_gbps = 0;              // GPU PCIe bandwidth per direction; 0: from the GPUs' gen/width, else 24
  std::string cpu_arch, cpu_vendor;  // "x86_64", "GenuineIntel" (NCCL XML); empty: unknown
  int cpu_family = -1, cpu_model = -1;
  double sys_factor = 0.5;   // share of pcie_gbps across NUMA nodes (NCCL models QPI at 6 vs PCI 12)
  std::vector<int> free;     // GPUs free for placement (indices)
  bool free_listed = false;  // `free` was given (an empty list then means none is free); else all are

  int size() const { return static_cast<int>(gpus.size()); }
  // NVLinks a pair can use: direct links plus the links both have into the NVSwitch fabric.
  int nvlinkCount(int a, int b) const;
  // Bandwidth of the best path between two GPUs, GB/s per direction (NVLink, else PCIe by level).
  double pairGbps(int a, int b) const;
  // PCIe bandwidth per direction the model assumes for the GPUs' links.
  double pcieGbps() const;
  // The free GPUs (all unless a free list was given), sorted.
  std::vector<int> freeGpus() const;
};

// Measured copy bandwidth between GPUs and from the host (`topo --measure`), GB/s (1e9 B/s).
struct BandwidthMeasurement {
  std::vector<std::vector<double>> p2p_gbps;  // [src][dst]; diagonal: device-local copy
  std::vector<std::vector<bool>> p2p_access;  // cudaDeviceCanAccessPeer
  std::vector<double> h2d_gbps, d2h_gbps;     // pinned host memory <-> each GPU
  int64_t bytes = 0;                          // per copy
  int repeats = 0;                            // timed copies per figure (median reported)
};

// A host of a cluster: how many GPUs it has and how many are free, under which leaf switch.
struct ClusterHost {
  std::string name;
  int switch_index = -1;  // the leaf switch it hangs off
  int gpus = 8;
  int free_gpus = 8;
};

struct NetSwitch {
  std::string name;
  int parent = -1;  // -1: a root (core or top spine)
};

struct ClusterTopology {
  std::string source;
  std::vector<NetSwitch> switches;
  std::vector<ClusterHost> hosts;
  NodeTopology node;  // the GPU topology every host shares, if the file names one
  bool has_node = false;
};

// "0-3,8" (the kernel's cpulist format) -> sorted CPU ids; empty on a malformed list.
std::vector<int> parseCpuList(const std::string& s);
// The one NUMA node whose CPUs include every CPU of `cpu_list`, or -1 (none, several, or no list):
// where nvidia-smi's "NUMA Affinity" comes from when the GPU itself reports no node (VMs).
int numaNodeOfCpus(const std::string& cpu_list, const std::vector<NumaNode>& nodes);

}  // namespace gpudoctor
