#include "model/topology.h"

#include <algorithm>
#include <sstream>

namespace gpudoctor {

const char* pcieLevelName(PcieLevel l) {
  switch (l) {
    case PcieLevel::kInternal:
    case PcieLevel::kSingle:
      return "PIX";
    case PcieLevel::kMultiple:
      return "PXB";
    case PcieLevel::kHostBridge:
      return "PHB";
    case PcieLevel::kNode:
      return "NODE";
    case PcieLevel::kSystem:
      return "SYS";
  }
  return "SYS";
}

bool parsePcieLevel(const std::string& s, PcieLevel* out) {
  static const std::pair<const char*, PcieLevel> names[] = {
      {"PIX", PcieLevel::kSingle},        {"SINGLE", PcieLevel::kSingle},  {"PXB", PcieLevel::kMultiple},
      {"MULTIPLE", PcieLevel::kMultiple}, {"PHB", PcieLevel::kHostBridge}, {"HOSTBRIDGE", PcieLevel::kHostBridge},
      {"NODE", PcieLevel::kNode},         {"SYS", PcieLevel::kSystem},     {"SYSTEM", PcieLevel::kSystem},
      {"INTERNAL", PcieLevel::kInternal}};
  for (const auto& [n, l] : names)
    if (s == n) {
      *out = l;
      return true;
    }
  return false;
}

int NodeTopology::nvlinkCount(int a, int b) const {
  if (a == b) return 0;
  int direct = nvlinks.empty() ? 0 : nvlinks[a][b];
  return direct + std::min(gpus[a].nvswitch_links, gpus[b].nvswitch_links);
}

double NodeTopology::pcieGbps() const {
  if (pcie_gbps > 0) return pcie_gbps;
  // Usable bandwidth of an x16 link per direction by generation (about 80 % of the raw rate).
  int gen = 0, width = 16;
  for (const auto& g : gpus)
    if (g.pcie_gen > 0) {
      gen = gen == 0 ? g.pcie_gen : std::min(gen, g.pcie_gen);
      if (g.pcie_width > 0) width = std::min(width, g.pcie_width);
    }
  static const double x16[] = {0, 3.2, 6.4, 12.6, 25.2, 50.4, 100.8};
  if (gen <= 0 || gen > 6) return 24;
  return x16[gen] * width / 16.0;
}

double NodeTopology::pairGbps(int a, int b) const {
  int n = nvlinkCount(a, b);
  if (n > 0) return n * nvlink_gbps;
  double p = pcieGbps();
  return pcie[a][b] == PcieLevel::kSystem ? p * sys_factor : p;
}

std::vector<int> NodeTopology::freeGpus() const {
  std::vector<int> f = free;
  if (!free_listed && f.empty())
    for (const auto& g : gpus) f.push_back(g.index);
  std::sort(f.begin(), f.end());
  return f;
}

std::vector<int> parseCpuList(const std::string& s) {
  std::vector<int> out;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, ',')) {
    if (part.empty()) continue;
    auto dash = part.find('-');
    try {
      int a = std::stoi(part.substr(0, dash)), b = dash == std::string::npos ? a : std::stoi(part.substr(dash + 1));
      for (int c = a; c <= b && c - a < 65536; ++c) out.push_back(c);
    } catch (...) {
      return {};
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

int numaNodeOfCpus(const std::string& cpu_list, const std::vector<NumaNode>& nodes) {
  std::vector<int> cpus = parseCpuList(cpu_list);
  if (cpus.empty()) return -1;
  int found = -1;
  for (const NumaNode& n : nodes) {
    std::vector<int> mine = parseCpuList(n.cpu_list);
    if (!std::includes(mine.begin(), mine.end(), cpus.begin(), cpus.end())) continue;
    if (found >= 0) return -1;  // two nodes claim the same CPUs: a malformed tree, no answer
    found = n.id;
  }
  return found;
}

}  // namespace gpudoctor
