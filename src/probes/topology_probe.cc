#include "probes/topology_probe.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "common/exact_time.h"
#include "probes/host_net.h"
#include "probes/nvml/nvml_api.h"
#include "probes/sys_files.h"

namespace gpudoctor {

namespace fs = std::filesystem;

namespace {

int readInt(const fs::path& p, int dflt) {
  auto v = parseInt64(readSysLine(p));
  return v ? static_cast<int>(*v) : dflt;
}

// The canonical sysfs path of a PCI device (/sys/devices/pci0000:00/.../0000:18:00.0), relative to
// the root so fake trees work; empty when the device is not there.
std::string pciPath(const fs::path& root, const std::string& bdf) {
  if (bdf.empty()) return "";
  std::error_code ec;
  fs::path link = root / "sys/bus/pci/devices" / bdf;
  fs::path real = fs::canonical(link, ec);
  if (ec) return "";
  return real.string();
}

std::string cpuListFromMask(const unsigned long* words, int n) {
  std::string out;
  int bits = n * static_cast<int>(sizeof(unsigned long) * 8);
  int start = -1;
  auto bit = [&](int i) {
    return i < bits && ((words[i / (sizeof(unsigned long) * 8)] >> (i % (sizeof(unsigned long) * 8))) & 1ul);
  };
  for (int i = 0; i <= bits; ++i) {
    if (bit(i)) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      out += (out.empty() ? "" : ",") + std::to_string(start) + (i - 1 > start ? "-" + std::to_string(i - 1) : "");
      start = -1;
    }
  }
  return out;
}

void cpuInfo(const fs::path& root, NodeTopology* t) {
  struct utsname u;
  if (uname(&u) == 0) t->cpu_arch = u.machine;
  std::ifstream f(root / "proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, line.find_first_of(" \t"));
    std::string val = line.substr(colon + 1);
    while (!val.empty() && val.front() == ' ') val.erase(0, 1);
    if (key == "vendor_id" && t->cpu_vendor.empty())
      t->cpu_vendor = val;
    else if (key == "cpu" && line.rfind("cpu family", 0) == 0 && t->cpu_family < 0)
      t->cpu_family = std::atoi(val.c_str());
    else if (key == "model" && line.rfind("model name", 0) != 0 && t->cpu_model < 0)
      t->cpu_model = std::atoi(val.c_str());
    if (!t->cpu_vendor.empty() && t->cpu_family >= 0 && t->cpu_model >= 0) break;
  }
}

}  // namespace

std::string normalizeBusId(const std::string& id) {
  // "00000000:18:00.0" -> "0000:18:00.0": NVML pads the domain to 8 digits, sysfs and NCCL to 4.
  std::string s = id;
  auto colon = s.find(':');
  if (colon != std::string::npos && colon > 4) s = s.substr(colon - 4);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// The components of a device's sysfs path below /devices/: [pci0000:00, root port, switch up,
// switch down, ..., device].
std::vector<std::string> pciComponents(const std::string& path) {
  std::vector<std::string> comps;
  auto at = path.find("/devices/");
  std::stringstream ss(at == std::string::npos ? path : path.substr(at + 9));
  std::string c;
  while (std::getline(ss, c, '/'))
    if (!c.empty()) comps.push_back(c);
  return comps;
}

std::vector<std::string> ncclPciParents(const std::string& path) {
  std::vector<std::string> comps = pciComponents(path);
  std::vector<std::string> out;
  for (int i = static_cast<int>(comps.size()) - 3; i >= 2; i -= 2) out.insert(out.begin(), comps[i]);
  return out;
}

PcieLevel sysfsPcieLevel(const std::string& a, const std::string& b, int numa_a, int numa_b) {
  auto ca = pciComponents(a), cb = pciComponents(b);
  bool same_node = numa_a >= 0 && numa_a == numa_b;
  if (ca.empty() || cb.empty() || ca[0] != cb[0]) return same_node ? PcieLevel::kNode : PcieLevel::kSystem;
  size_t common = 0;
  while (common < ca.size() && common < cb.size() && ca[common] == cb[common]) ++common;
  if (common <= 1) return PcieLevel::kHostBridge;  // they part at the host bridge's root ports
  // Below the common bridge each side has its downstream port and the device: one switch.
  if (ca.size() - common <= 2 && cb.size() - common <= 2) return PcieLevel::kSingle;
  return PcieLevel::kMultiple;
}
namespace {

// One GPU's identity, PCIe link, NUMA node, CPUs and compute processes, from NVML (sysfs where
// NVML cannot tell).
void probeGpu(const nvml::Api& api, nvml::Device dev, int i, const fs::path& root, TopoGpu& g) {
  g.index = i;
  char buf[96] = {0};
  if (api.DeviceGetName(dev, buf, sizeof(buf)) == nvml::kSuccess) g.name = buf;
  char uuid[96] = {0};
  if (api.DeviceGetUUID(dev, uuid, sizeof(uuid)) == nvml::kSuccess) g.uuid = uuid;
  nvml::PciInfo pci{};
  if (api.DeviceGetPciInfo(dev, &pci) == nvml::kSuccess) g.pci_bus_id = normalizeBusId(pci.busId);
  int major = 0, minor = 0;
  if (api.DeviceGetCudaComputeCapability && api.DeviceGetCudaComputeCapability(dev, &major, &minor) == nvml::kSuccess)
    g.sm = major * 10 + minor;
  unsigned int v = 0;
  if (api.DeviceGetMaxPcieLinkGeneration && api.DeviceGetMaxPcieLinkGeneration(dev, &v) == nvml::kSuccess)
    g.pcie_gen = static_cast<int>(v);
  if (api.DeviceGetMaxPcieLinkWidth && api.DeviceGetMaxPcieLinkWidth(dev, &v) == nvml::kSuccess)
    g.pcie_width = static_cast<int>(v);
  // NUMA: NVML first; VMs and older drivers answer NOT_SUPPORTED, then sysfs knows (or says -1).
  unsigned int numa = 0;
  if (api.DeviceGetNumaNodeId && api.DeviceGetNumaNodeId(dev, &numa) == nvml::kSuccess)
    g.numa_node = static_cast<int>(numa);
  else
    g.numa_node = readInt(root / "sys/bus/pci/devices" / g.pci_bus_id / "numa_node", -1);
  unsigned long mask[64] = {0};
  if (api.DeviceGetCpuAffinity && api.DeviceGetCpuAffinity(dev, 64, mask) == nvml::kSuccess)
    g.cpu_list = cpuListFromMask(mask, 64);
  // Its compute processes, room for 64 (as the monitor's sampler asks).
  unsigned int procs = 64;
  if (api.DeviceGetComputeRunningProcesses) {
    nvml::ProcessInfo p[64];
    if (api.DeviceGetComputeRunningProcesses(dev, &procs, p) == nvml::kSuccess)
      for (unsigned int j = 0; j < procs; ++j) g.pids.push_back(static_cast<int>(p[j].pid));
  } else if (api.DeviceGetComputeRunningProcessesV1) {
    nvml::ProcessInfoV1 p[64];
    if (api.DeviceGetComputeRunningProcessesV1(dev, &procs, p) == nvml::kSuccess)
      for (unsigned int j = 0; j < procs; ++j) g.pids.push_back(static_cast<int>(p[j].pid));
  }
  if (g.cpu_list.empty()) g.cpu_list = readSysLine(root / "sys/bus/pci/devices" / g.pci_bus_id / "local_cpulist");
}

// The PCIe level between each pair of GPUs: NVML's common ancestor.
void probePcieLevels(const nvml::Api& api, const std::vector<nvml::Device>& dev, NodeTopology& t) {
  const int n = static_cast<int>(dev.size());
  t.pcie.assign(n, std::vector<PcieLevel>(n, PcieLevel::kSystem));
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      int level = 0;
      if (api.DeviceGetTopologyCommonAncestor(dev[a], dev[b], &level) == nvml::kSuccess) {
        // NVML's values are ours; anything else (a future level) counts as the farthest.
        switch (level) {
          case 0:
          case 10:
          case 20:
          case 30:
          case 40:
          case 50:
            t.pcie[a][b] = static_cast<PcieLevel>(level);
            break;
          default:
            t.pcie[a][b] = PcieLevel::kSystem;
        }
      }
    }
}

// Link state: on Hopper and later through the field-value API, as NCCL reads it (the older call
// is not reliable there), else nvmlDeviceGetNvLinkState.
bool linkActive(const nvml::Api& api, nvml::Device dev, int sm, unsigned int link) {
  if (sm >= 90 && api.DeviceGetFieldValues) {
    nvml::FieldValue fv{};
    fv.fieldId = nvml::kFieldNvLinkGetState;
    fv.scopeId = link;
    if (api.DeviceGetFieldValues(dev, 1, &fv) == nvml::kSuccess && fv.nvmlReturn == nvml::kSuccess)
      return fv.value.ui == 1;
  }
  int active = 0;
  return api.DeviceGetNvLinkState && api.DeviceGetNvLinkState(dev, link, &active) == nvml::kSuccess && active == 1;
}

// The active NVLinks of each GPU: to another GPU of this node (per pair, the larger count of the
// two ends), else to an NVSwitch. Then the per-link speed from the architecture.
void probeNvLinks(const nvml::Api& api, const std::vector<nvml::Device>& dev, NodeTopology& t) {
  const int n = static_cast<int>(dev.size());
  t.nvlinks.assign(n, std::vector<int>(n, 0));
  if (api.DeviceGetNvLinkState || api.DeviceGetFieldValues) {
    for (int a = 0; a < n; ++a)
      for (unsigned int link = 0; link < nvml::kNvLinkMaxLinks; ++link) {
        if (!linkActive(api, dev[a], t.gpus[a].sm, link)) continue;
        int type = nvml::kNvLinkUnknown;
        if (api.DeviceGetNvLinkRemoteDeviceType) api.DeviceGetNvLinkRemoteDeviceType(dev[a], link, &type);
        int peer = -1;
        nvml::PciInfo remote{};
        if (type != nvml::kNvLinkSwitch && api.DeviceGetNvLinkRemotePciInfo &&
            api.DeviceGetNvLinkRemotePciInfo(dev[a], link, &remote) == nvml::kSuccess) {
          std::string bdf = normalizeBusId(remote.busId);
          for (int b = 0; b < n; ++b)
            if (b != a && t.gpus[b].pci_bus_id == bdf) peer = b;
        }
        // Not a GPU of this node: an NVSwitch (or a GPU hidden from us, reached the same way).
        if (peer >= 0)
          ++t.nvlinks[a][peer];
        else if (type != nvml::kNvLinkIbmNpu)
          ++t.gpus[a].nvswitch_links;
      }
    for (int a = 0; a < n; ++a)
      for (int b = a + 1; b < n; ++b) t.nvlinks[a][b] = t.nvlinks[b][a] = std::max(t.nvlinks[a][b], t.nvlinks[b][a]);
  }
  // Per link and direction: NVLink 1 (Pascal) 20 GB/s, NVLink 2-4 (Volta to Hopper) 25 GB/s,
  // NVLink 5 (Blackwell) 50 GB/s. Taken from the architecture: nvmlDeviceGetNvLinkVersion's
  // numbering changed between drivers (a raw version, later an enum where 4.0 is 6).
  int sm = t.gpus[0].sm;
  if (sm > 0) t.nvlink_gbps = sm < 70 ? 20 : sm >= 100 ? 50 : 25;
}

// NUMA nodes of the host; a GPU with no node from NVML or sysfs (-1 in VMs): the node holding all
// of its CPUs, as nvidia-smi fills its NUMA Affinity column.
void probeNuma(const fs::path& root, NodeTopology& t) {
  std::error_code ec;
  for (auto it = fs::directory_iterator(root / "sys/devices/system/node", ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.rfind("node", 0) != 0 || name.size() < 5 || !std::isdigit(static_cast<unsigned char>(name[4]))) continue;
    t.numa.push_back({std::atoi(name.c_str() + 4), readSysLine(it->path() / "cpulist")});
  }
  std::sort(t.numa.begin(), t.numa.end(), [](const NumaNode& a, const NumaNode& b) { return a.id < b.id; });
  for (auto& g : t.gpus)
    if (g.numa_node < 0) g.numa_node = numaNodeOfCpus(g.cpu_list, t.numa);
}

// Adds one NIC: its PCI device (walking up from a virtual function or virtio child to a bus id),
// NUMA node and PCIe level to each GPU; its sysfs path goes to nic_paths ("" where unknown).
void addNic(TopoNic nic, const fs::path& device_link, const std::vector<std::string>& gpu_paths, NodeTopology& t,
            std::vector<std::string>& nic_paths) {
  std::error_code e;
  fs::path real = fs::canonical(device_link, e);
  std::string path = e ? "" : real.string();
  // A virtual function or a virtio child sits below its PCI device: walk up to a bus id.
  static const std::regex kBusId("[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-7]");
  while (!path.empty() && !std::regex_match(real.filename().string(), kBusId) && real.has_parent_path() &&
         real.parent_path() != real) {
    real = real.parent_path();
    if (real.filename().string().rfind("pci", 0) == 0) path.clear();
  }
  if (!path.empty()) {
    path = real.string();
    nic.pci_bus_id = real.filename().string();
    nic.numa_node = readInt(real / "numa_node", -1);
  }
  for (size_t g = 0; g < gpu_paths.size(); ++g)
    nic.level_to_gpu.push_back(
        path.empty() || gpu_paths[g].empty()
            ? (nic.numa_node >= 0 && nic.numa_node == t.gpus[g].numa_node ? PcieLevel::kNode : PcieLevel::kSystem)
            : sysfsPcieLevel(path, gpu_paths[g], nic.numa_node, t.gpus[g].numa_node));
  nic_paths.push_back(path);
  nic.pci_switches = ncclPciParents(path);
  t.nics.push_back(std::move(nic));
}

// NICs: the RDMA devices (InfiniBand or RoCE HCAs), what nvidia-smi topo -m lists and NCCL_IB_HCA
// names; plain Ethernet interfaces (virtio in VMs) have no PCIe place worth binding to. The GPUs'
// PCIe switches too, and the levels between NICs.
void probeNics(const std::string& sysfs_root, const fs::path& root, NodeTopology& t) {
  HostNet net = probeHostNet(sysfs_root);
  std::vector<std::string> gpu_paths;
  for (auto& g : t.gpus) {
    gpu_paths.push_back(pciPath(root, g.pci_bus_id));
    g.pci_switches = ncclPciParents(gpu_paths.back());
  }
  std::vector<std::string> nic_paths;
  fs::path ib = root / "sys/class/infiniband";
  for (const auto& d : net.ib) {
    TopoNic nic;
    nic.name = d.name;
    nic.infiniband = true;
    // The first ACTIVE port, else the first port there is.
    auto active = std::find_if(d.ports.begin(), d.ports.end(), [](const auto& p) { return p.state == "ACTIVE"; });
    if (active != d.ports.end())
      nic.port = active->port;
    else if (!d.ports.empty())
      nic.port = d.ports.front().port;
    std::string rate = readSysLine(ib / d.name / "ports" / std::to_string(nic.port) / "rate");  // "400 Gb/sec (4X NDR)"
    nic.speed_gbps = std::atof(rate.c_str());
    addNic(nic, ib / d.name / "device", gpu_paths, t, nic_paths);
  }
  for (size_t i = 0; i < t.nics.size(); ++i)
    for (size_t j = 0; j < t.nics.size(); ++j)
      t.nics[i].level_to_nic.push_back(
          nic_paths[i].empty() || nic_paths[j].empty()
              ? PcieLevel::kSystem
              : sysfsPcieLevel(nic_paths[i], nic_paths[j], t.nics[i].numa_node, t.nics[j].numa_node));
}

}  // namespace

Result<NodeTopology> probeTopology(const TopologyProbeOptions& opt) {
  auto loaded = nvml::load(opt.nvml_library);
  if (!loaded.ok()) return loaded.error();
  const nvml::Api& api = *loaded.value();
  fs::path root = opt.sysfs_root.empty() ? fs::path("/") : fs::path(opt.sysfs_root);
  NodeTopology t;
  t.source = "NVML (" + api.library + ")";
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) == 0) t.name = host;
  unsigned int count = 0;
  if (nvml::Return r = api.DeviceGetCount(&count); r != nvml::kSuccess)
    return Error{"NVML: cannot count GPUs: " + nvml::errorString(api, r)};
  if (count == 0) return Error{"NVML reports no GPUs on this node"};
  int n = static_cast<int>(count);
  std::vector<nvml::Device> dev(n);
  t.gpus.resize(n);
  for (int i = 0; i < n; ++i) {
    if (nvml::Return r = api.DeviceGetHandleByIndex(i, &dev[i]); r != nvml::kSuccess)
      return Error{"NVML: GPU " + std::to_string(i) + ": " + nvml::errorString(api, r)};
    probeGpu(api, dev[i], i, root, t.gpus[i]);
  }
  probePcieLevels(api, dev, t);
  probeNvLinks(api, dev, t);
  probeNuma(root, t);
  probeNics(opt.sysfs_root, root, t);
  cpuInfo(root, &t);
  // Free: the GPUs no compute process runs on (a busy GPU is not offered; place --include-busy).
  for (int i = 0; i < n; ++i)
    if (t.gpus[static_cast<size_t>(i)].pids.empty()) t.free.push_back(i);
  t.free_listed = true;
  return t;
}

}  // namespace gpudoctor
