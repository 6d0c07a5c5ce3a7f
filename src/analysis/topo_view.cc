#include "analysis/topo_view.h"

#include <algorithm>
#include <cstdint>
#include <set>

#include <fmt/format.h>

namespace gpudoctor {

namespace {

std::string numaCpus(const NodeTopology& t, int numa) {
  for (const auto& n : t.numa)
    if (n.id == numa) return n.cpu_list;
  return "";
}

// A CPU list as the kernel's cpumap writes it (NCCL's "affinity"): 32-bit hex words, high first.
std::string cpuMask(const std::string& list) {
  auto cpus = parseCpuList(list);
  if (cpus.empty()) return "";
  int words = *std::max_element(cpus.begin(), cpus.end()) / 32 + 1;
  std::vector<uint32_t> w(words, 0);
  for (int c : cpus) w[c / 32] |= 1u << (c % 32);
  std::string s;
  for (int i = words - 1; i >= 0; --i) s += fmt::format("{}{:08x}", i == words - 1 ? "" : ",", w[i]);
  return s;
}

std::string pcieSpeed(int gen) {
  static const char* s[] = {
      "", "2.5 GT/s PCIe", "5.0 GT/s PCIe", "8.0 GT/s PCIe", "16.0 GT/s PCIe", "32.0 GT/s PCIe", "64.0 GT/s PCIe"};
  return gen >= 1 && gen <= 6 ? s[gen] : "";
}

std::string gpuBusId(const TopoGpu& g) { return g.pci_bus_id; }

}  // namespace

std::string ncclXmlMissing(const NodeTopology& t) {
  for (const auto& g : t.gpus)
    if (g.pci_bus_id.empty())
      return fmt::format(
          "GPU {} has no PCI bus id (bus_id): NCCL matches NCCL_TOPO_FILE's GPUs to its devices by bus id, so "
          "give each GPU its bus_id (nvidia-smi --query-gpu=index,pci.bus_id --format=csv) or run topo on the machine",
          g.index);
  for (const auto& g : t.gpus)
    if (g.sm == 0)
      return fmt::format(
          "GPU {} has no SM version (sm, e.g. 90 for H100/H200): NCCL's XML needs it; add it to the topology file",
          g.index);
  return {};
}

std::vector<std::string> gpuCpuLists(const NodeTopology& t) {
  std::vector<std::string> v;
  for (const auto& g : t.gpus) v.push_back(g.cpu_list.empty() ? numaCpus(t, g.numa_node) : g.cpu_list);
  return v;
}

NcclXmlSystem ncclXmlSystem(const NodeTopology& t) {
  NcclXmlSystem x;
  x.arch = t.cpu_arch, x.vendor = t.cpu_vendor, x.family = t.cpu_family, x.model = t.cpu_model;
  // Group GPUs and NICs under their NUMA node's <cpu>; -1 (unknown) is what NCCL itself writes
  // for devices whose sysfs numa_node is -1.
  std::set<int> numas;
  for (const auto& g : t.gpus) numas.insert(g.numa_node);
  for (const auto& n : t.nics) numas.insert(n.numa_node);
  for (int numa : numas) {
    NcclXmlCpu c;
    c.numa = numa;
    std::string cpus = numaCpus(t, numa);
    if (cpus.empty())
      for (const auto& g : t.gpus)
        if (g.numa_node == numa && !g.cpu_list.empty()) cpus = g.cpu_list;
    c.affinity = cpuMask(cpus);
    for (const auto& g : t.gpus) {
      if (g.numa_node != numa) continue;
      NcclXmlGpu e;
      // dev and rank as NCCL's own dumps write them (NCCL resets rank per communicator).
      e.dev = g.index, e.rank = g.index, e.sm = g.sm;
      e.busid = gpuBusId(g);
      if (g.pcie_gen)
        e.link = true, e.link_speed = pcieSpeed(g.pcie_gen), e.link_width = g.pcie_width ? g.pcie_width : 16;
      for (const auto& o : t.gpus)
        if (o.index != g.index && t.nvlinks[g.index][o.index] > 0)
          e.nvlinks.emplace_back(gpuBusId(o), t.nvlinks[g.index][o.index]);
      e.nvswitch_links = g.nvswitch_links;
      e.pci_switches = g.pci_switches;
      c.gpus.push_back(std::move(e));
    }
    for (const auto& n : t.nics)
      if (n.numa_node == numa) c.nics.push_back({n.name, n.pci_bus_id, n.port, n.infiniband, n.pci_switches});
    x.cpus.push_back(std::move(c));
  }
  return x;
}

}  // namespace gpudoctor
