// What `topo` shows beyond the topology itself, resolved here so the renderers only format: each
// GPU's CPU list (its own, else its NUMA node's), and NCCL's topology XML with the values NCCL needs
// filled in where the topology lacks them (bus ids, SM, link width, the CPU affinity mask).
#pragma once
#include <string>
#include <vector>

#include "model/topology.h"

namespace gpudoctor {

// Per GPU: its own CPU list, else its NUMA node's ("" when neither is known).
std::vector<std::string> gpuCpuLists(const NodeTopology& t);

// One GPU of the XML, every attribute resolved.
struct NcclXmlGpu {
  int dev = 0, sm = 90, rank = 0;
  std::string busid;       // the GPU's, else 0000:(0x10 + index):00.0
  bool link = false;       // PCIe generation known: link_speed and link_width apply
  std::string link_speed;  // "16.0 GT/s PCIe"
  int link_width = 16;
  std::vector<std::pair<std::string, int>> nvlinks;  // peer bus id, link count
  int nvswitch_links = 0;
  std::vector<std::string> pci_switches;  // upstream switch bus ids, outermost first
};

// One NIC of the XML.
struct NcclXmlNic {
  std::string name, busid;  // busid empty: the NIC is not under PCIe as far as we know
  int port = 1;
  bool infiniband = false;
  std::vector<std::string> pci_switches;
};

// One <cpu> (a NUMA node; -1: unknown, as NCCL writes it) with the devices under it.
struct NcclXmlCpu {
  int numa = -1;
  std::string affinity;  // the kernel's cpumap form (32-bit hex words, high first); empty: unknown
  std::vector<NcclXmlGpu> gpus;
  std::vector<NcclXmlNic> nics;
};

// The whole <system>: CPUs by NUMA id, plus the CPU identity every <cpu> carries.
struct NcclXmlSystem {
  std::vector<NcclXmlCpu> cpus;
  std::string arch, vendor;
  int family = -1, model = -1;
};

// Whether `t` holds what NCCL needs to match an NCCL_TOPO_FILE to its devices: every GPU's PCI bus
// id and SM version (a topology file written by hand may lack them; inventing them gives NCCL an
// XML that describes no real machine). "" when ready, else the one-line reason.
std::string ncclXmlMissing(const NodeTopology& t);
// The XML's content for `t` (call ncclXmlMissing first).
NcclXmlSystem ncclXmlSystem(const NodeTopology& t);

}  // namespace gpudoctor
