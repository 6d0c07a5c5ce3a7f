#include "sources/topology_file/parse.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace gpudoctor::topology_file_detail {
namespace {

// A PCIe tree position: the chain of switches above a device, its host bridge and NUMA node.
struct PciePlace {
  std::vector<std::string> switches;  // nearest first
  std::string host_bridge;
  int numa = -1;
  bool known = false;
};

struct PcieSwitchDef {
  std::string parent, host_bridge;
  int numa = -1;
  std::string at;
};

PcieLevel levelBetween(const PciePlace& a, const PciePlace& b) {
  if (!a.switches.empty() && !b.switches.empty() && a.switches.front() == b.switches.front()) return PcieLevel::kSingle;
  for (const auto& s : a.switches)
    if (std::find(b.switches.begin(), b.switches.end(), s) != b.switches.end()) return PcieLevel::kMultiple;
  if (!a.host_bridge.empty() && a.host_bridge == b.host_bridge) return PcieLevel::kHostBridge;
  if (a.numa >= 0 && a.numa == b.numa) return PcieLevel::kNode;
  return PcieLevel::kSystem;
}

// Switch chains from [[pcie_switch]] parents; a cycle is an error naming the switches on it.
Status resolvePlace(const std::map<std::string, PcieSwitchDef>& sw, const std::string& first, PciePlace* p,
                    const std::string& at) {
  std::string cur = first;
  std::vector<std::string> seen;
  while (!cur.empty()) {
    auto it = sw.find(cur);
    if (it == sw.end()) return Error{at + ": unknown pcie_switch \"" + cur + "\""};
    if (std::find(seen.begin(), seen.end(), cur) != seen.end()) {
      std::string cyc;
      for (const auto& s : seen) cyc += s + " -> ";
      return Error{it->second.at + ": cycle in the PCIe switch tree: " + cyc + cur};
    }
    seen.push_back(cur);
    p->switches.push_back(cur);
    if (!it->second.host_bridge.empty()) p->host_bridge = it->second.host_bridge;
    if (it->second.numa >= 0 && p->numa < 0) p->numa = it->second.numa;
    cur = it->second.parent;
  }
  if (p->host_bridge.empty() && !p->switches.empty()) p->host_bridge = "root-of-" + p->switches.back();
  return {};
}

Status readLevelRow(const Ctx& c, const toml::array& row, int n, int self, std::vector<PcieLevel>* out,
                    const std::string& where, const char* key = "pcie", const char* of = "GPUs") {
  if (static_cast<int>(row.size()) != n)
    return Error{c.at(row) + ": \"" + key + "\" in " + where + " has " + std::to_string(row.size()) +
                 " entries; the file has " + std::to_string(n) + " " + of};
  out->assign(n, PcieLevel::kSystem);
  for (int i = 0; i < n; ++i) {
    auto s = row[i].value<std::string>();
    if (!s)
      return Error{c.at(row[i]) + ": \"" + key + "\" in " + where + ": entries are PIX, PXB, PHB, NODE, SYS or X"};
    if (i == self) {
      if (*s != "X") return Error{c.at(row[i]) + ": \"" + key + "\" in " + where + ": its own entry must be \"X\""};
      continue;
    }
    if (!parsePcieLevel(*s, &(*out)[i]))
      return Error{c.at(row[i]) + ": \"" + key + "\" in " + where + ": unknown level \"" + *s +
                   "\" (PIX, PXB, PHB, NODE, SYS)"};
  }
  return {};
}

// The node's own keys; the ones `topo --json` writes for information are accepted and not read.
Status readNodeKeys(Fields& top, NodeTopology& t) {
  RETURN_IF_ERROR(top.string("name", &t.name));
  RETURN_IF_ERROR(top.number("nvlink_gbps", &t.nvlink_gbps, 0.001));
  RETURN_IF_ERROR(top.number("pcie_gbps", &t.pcie_gbps, 0));
  RETURN_IF_ERROR(top.number("sys_factor", &t.sys_factor, 0.001));
  RETURN_IF_ERROR(top.string("cpu_arch", &t.cpu_arch));
  RETURN_IF_ERROR(top.string("cpu_vendor", &t.cpu_vendor));
  RETURN_IF_ERROR(top.integer("cpu_family", &t.cpu_family, false, 0));
  RETURN_IF_ERROR(top.integer("cpu_model", &t.cpu_model, false, 0));
  top.node("format");             // written by `topo --json`, informational
  top.node("tool");               // written by `topo --json`, as every JSON document names its tool ...
  top.node("schema_version");     // ... and schema version
  top.node("nvidia_smi_matrix");  // written by `topo --json` for reading; the links above are the data
  top.node("measured");           // written by `topo --json --measure`
  return {};
}

// [[numa]]: the NUMA nodes and their CPUs.
Status readNuma(const Ctx& c, Fields& top, NodeTopology& t) {
  const toml::array* numa = top.array("numa");
  if (numa)
    for (const auto& e : *numa) {
      const toml::table* tb = e.as_table();
      if (!tb) return Error{c.at(e) + ": [[numa]] entries must be tables"};
      Fields f(c, *tb, "[[numa]]");
      NumaNode nn;
      RETURN_IF_ERROR(f.integer("id", &nn.id, true, 0));
      RETURN_IF_ERROR(f.string("cpus", &nn.cpu_list));
      RETURN_IF_ERROR(f.unknown());
      t.numa.push_back(nn);
    }
  return {};
}

// [[pcie_switch]]: the PCIe switches by id; every one must reach a root without a cycle, even one
// no GPU hangs off.
Status readSwitches(const Ctx& c, Fields& top, std::map<std::string, PcieSwitchDef>& switches) {
  if (const toml::array* sw = top.array("pcie_switch"))
    for (const auto& e : *sw) {
      const toml::table* tb = e.as_table();
      if (!tb) return Error{c.at(e) + ": [[pcie_switch]] entries must be tables"};
      Fields f(c, *tb, "[[pcie_switch]]");
      std::string id;
      PcieSwitchDef d;
      d.at = c.at(*tb);
      RETURN_IF_ERROR(f.string("id", &id, true));
      RETURN_IF_ERROR(f.string("parent", &d.parent));
      RETURN_IF_ERROR(f.string("host_bridge", &d.host_bridge));
      RETURN_IF_ERROR(f.integer("numa", &d.numa, false, 0));
      RETURN_IF_ERROR(f.unknown());
      if (switches.count(id)) return Error{d.at + ": duplicate pcie_switch \"" + id + "\""};
      switches[id] = d;
    }
  for (const auto& [id, d] : switches) {
    PciePlace p;
    RETURN_IF_ERROR(resolvePlace(switches, id, &p, d.at));
  }
  return {};
}

// What the [[gpu]] entries say of the PCIe tree, per GPU index: its place, its "pcie" row where
// given, and where in the file it is.
struct GpuPcie {
  std::vector<PciePlace> places;
  std::vector<std::vector<PcieLevel>> rows;
  std::vector<bool> has_row;
  std::vector<std::string> gpu_at;
  std::vector<bool> seen;
};

// One [[gpu]] entry of n: its keys, its PCIe place and row, its CPUs (its NUMA node's where not given).
Status readGpu(const Ctx& c, const toml::node& e, int n, const std::map<std::string, PcieSwitchDef>& switches,
               NodeTopology& t, GpuPcie& gp) {
  const toml::table* tb = e.as_table();
  if (!tb) return Error{c.at(e) + ": [[gpu]] entries must be tables"};
  Fields f(c, *tb, "[[gpu]]");
  TopoGpu g;
  RETURN_IF_ERROR(f.integer("index", &g.index, true, 0));
  if (g.index >= n)
    return Error{c.at(*tb) + ": [[gpu]] index " + std::to_string(g.index) + " out of range: " + std::to_string(n) +
                 " GPUs are numbered 0-" + std::to_string(n - 1)};
  if (gp.seen[g.index]) return Error{c.at(*tb) + ": duplicate [[gpu]] index " + std::to_string(g.index)};
  gp.seen[g.index] = true;
  gp.gpu_at[g.index] = c.at(*tb);
  RETURN_IF_ERROR(f.string("name", &g.name));
  RETURN_IF_ERROR(f.string("uuid", &g.uuid));
  RETURN_IF_ERROR(f.string("bus_id", &g.pci_bus_id));
  RETURN_IF_ERROR(f.integer("numa", &g.numa_node, false, 0));
  RETURN_IF_ERROR(f.string("cpus", &g.cpu_list));
  RETURN_IF_ERROR(f.integer("sm", &g.sm, false, 0));
  RETURN_IF_ERROR(f.integer("nvswitch_links", &g.nvswitch_links, false, 0, 18));
  RETURN_IF_ERROR(f.integer("pcie_gen", &g.pcie_gen, false, 0, 6));
  RETURN_IF_ERROR(f.integer("pcie_width", &g.pcie_width, false, 0, 32));
  std::string sw, hb;
  RETURN_IF_ERROR(f.string("pcie_switch", &sw));
  RETURN_IF_ERROR(f.string("host_bridge", &hb));
  PciePlace& p = gp.places[g.index];
  p.numa = g.numa_node;
  if (!sw.empty()) {
    RETURN_IF_ERROR(resolvePlace(switches, sw, &p, c.at(*tb)));
    if (g.numa_node < 0) g.numa_node = p.numa;
  }
  if (!hb.empty()) p.host_bridge = hb;
  if (p.host_bridge.empty()) p.host_bridge = "gpu" + std::to_string(g.index);  // its own root port
  if (const toml::array* row = f.array("pcie")) {
    RETURN_IF_ERROR(readLevelRow(c, *row, n, g.index, &gp.rows[g.index], "[[gpu]] " + std::to_string(g.index)));
    gp.has_row[g.index] = true;
  }
  if (g.cpu_list.empty())
    for (const auto& nn : t.numa)
      if (nn.id == g.numa_node) g.cpu_list = nn.cpu_list;
  if (g.numa_node >= 0 && !t.numa.empty() &&
      std::none_of(t.numa.begin(), t.numa.end(), [&](const NumaNode& nn) { return nn.id == g.numa_node; }))
    return Error{c.at(*tb) + ": [[gpu]] " + std::to_string(g.index) + ": unknown NUMA node " +
                 std::to_string(g.numa_node)};
  RETURN_IF_ERROR(f.unknown());
  t.gpus[g.index] = g;
  return {};
}

// [[gpu]]: the GPUs, numbered 0 to n-1 by their "index".
Status readGpus(const Ctx& c, const toml::array& gpus, const std::map<std::string, PcieSwitchDef>& switches,
                NodeTopology& t, GpuPcie& gp) {
  const int n = static_cast<int>(gpus.size());
  gp.places.resize(n);
  gp.rows.resize(n);
  gp.has_row.assign(n, false);
  gp.gpu_at.resize(n);
  gp.seen.assign(n, false);
  t.gpus.resize(n);
  for (const auto& e : gpus) RETURN_IF_ERROR(readGpu(c, e, n, switches, t, gp));
  return {};
}

// The PCIe level between each pair of GPUs: a GPU's "pcie" row (two rows must agree), else the
// other's, else from their places in the switch tree.
Status pcieMatrix(const GpuPcie& gp, NodeTopology& t) {
  const int n = static_cast<int>(gp.places.size());
  t.pcie.assign(n, std::vector<PcieLevel>(n, PcieLevel::kSystem));
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      if (gp.has_row[a]) {
        t.pcie[a][b] = gp.rows[a][b];
        if (gp.has_row[b] && gp.rows[b][a] != gp.rows[a][b])
          return Error{gp.gpu_at[b] + ": asymmetric PCIe levels: GPU " + std::to_string(a) + " -> " +
                       std::to_string(b) + " is " + pcieLevelName(gp.rows[a][b]) + " but " + std::to_string(b) +
                       " -> " + std::to_string(a) + " is " + pcieLevelName(gp.rows[b][a])};
      } else if (gp.has_row[b]) {
        t.pcie[a][b] = gp.rows[b][a];
      } else {
        t.pcie[a][b] = levelBetween(gp.places[a], gp.places[b]);
      }
    }
  return {};
}

// [[nvlink]]: NVLinks per GPU pair, given once per direction at most and alike both ways; no GPU
// has more than 18 (its NVSwitch links included).
Status readNvlinks(const Ctx& c, Fields& top, const std::vector<std::string>& gpu_at, NodeTopology& t) {
  const int n = static_cast<int>(t.gpus.size());
  t.nvlinks.assign(n, std::vector<int>(n, 0));
  std::map<std::pair<int, int>, std::pair<int, std::string>> given;
  if (const toml::array* links = top.array("nvlink"))
    for (const auto& e : *links) {
      const toml::table* tb = e.as_table();
      if (!tb) return Error{c.at(e) + ": [[nvlink]] entries must be tables"};
      Fields f(c, *tb, "[[nvlink]]");
      const toml::array* pair = f.array("gpus");
      int count = 1;
      RETURN_IF_ERROR(f.integer("count", &count, false, 1, 18));
      RETURN_IF_ERROR(f.unknown());
      if (!pair || pair->size() != 2 || !(*pair)[0].is_integer() || !(*pair)[1].is_integer())
        return Error{c.at(*tb) + ": [[nvlink]] needs \"gpus\" = [a, b] (two GPU indices)"};
      int a = static_cast<int>(*(*pair)[0].value<int64_t>()), b = static_cast<int>(*(*pair)[1].value<int64_t>());
      for (int x : {a, b})
        if (x < 0 || x >= n)
          return Error{c.at(*pair) + ": [[nvlink]] \"gpus\": unknown GPU id " + std::to_string(x) + " (GPUs are 0-" +
                       std::to_string(n - 1) + ")"};
      if (a == b) return Error{c.at(*pair) + ": [[nvlink]] \"gpus\": a GPU cannot link to itself"};
      if (given.count({a, b}))
        return Error{c.at(*tb) + ": duplicate [[nvlink]] " + std::to_string(a) + "-" + std::to_string(b) +
                     " (first at " + given[{a, b}].second + ")"};
      if (auto r = given.find({b, a}); r != given.end() && r->second.first != count)
        return Error{c.at(*tb) + ": asymmetric NVLinks: " + std::to_string(a) + " -> " + std::to_string(b) + " has " +
                     std::to_string(count) + " but " + std::to_string(b) + " -> " + std::to_string(a) + " (" +
                     r->second.second + ") has " + std::to_string(r->second.first)};
      given[{a, b}] = {count, c.at(*tb)};
      t.nvlinks[a][b] = t.nvlinks[b][a] = count;
    }
  for (int a = 0; a < n; ++a) {
    int total = t.gpus[a].nvswitch_links;
    for (int b = 0; b < n; ++b) total += t.nvlinks[a][b];
    if (total > 18)
      return Error{gpu_at[a] + ": GPU " + std::to_string(a) + " has " + std::to_string(total) +
                   " NVLinks; no GPU has more than 18"};
  }
  return {};
}

// One [[nic]] entry: its keys, its PCIe place and its levels to the GPUs (its "pcie" row, else from
// the places); its "nic_pcie" row, read once every NIC is known.
Status readNic(const Ctx& c, const toml::node& e, const std::map<std::string, PcieSwitchDef>& switches,
               const std::vector<PciePlace>& gpu_places, NodeTopology& t, std::vector<PciePlace>& nic_places,
               std::vector<const toml::array*>& nic_rows) {
  const int n = static_cast<int>(gpu_places.size());
  const toml::table* tb = e.as_table();
  if (!tb) return Error{c.at(e) + ": [[nic]] entries must be tables"};
  Fields f(c, *tb, "[[nic]]");
  TopoNic nic;
  RETURN_IF_ERROR(f.string("name", &nic.name, true));
  RETURN_IF_ERROR(f.string("bus_id", &nic.pci_bus_id));
  RETURN_IF_ERROR(f.integer("numa", &nic.numa_node, false, 0));
  RETURN_IF_ERROR(f.boolean("infiniband", &nic.infiniband));
  RETURN_IF_ERROR(f.integer("port", &nic.port, false, 1));
  RETURN_IF_ERROR(f.number("speed_gbps", &nic.speed_gbps));
  std::string sw, hb;
  RETURN_IF_ERROR(f.string("pcie_switch", &sw));
  RETURN_IF_ERROR(f.string("host_bridge", &hb));
  PciePlace p;
  p.numa = nic.numa_node;
  if (!sw.empty()) {
    RETURN_IF_ERROR(resolvePlace(switches, sw, &p, c.at(*tb)));
    if (nic.numa_node < 0) nic.numa_node = p.numa;
  }
  if (!hb.empty()) p.host_bridge = hb;
  if (p.host_bridge.empty()) p.host_bridge = "nic:" + nic.name;
  if (const toml::array* row = f.array("pcie")) {
    RETURN_IF_ERROR(readLevelRow(c, *row, n, -1, &nic.level_to_gpu, "[[nic]] " + nic.name));
  } else {
    for (int g = 0; g < n; ++g) nic.level_to_gpu.push_back(levelBetween(p, gpu_places[g]));
  }
  nic_rows.push_back(f.array("nic_pcie"));
  RETURN_IF_ERROR(f.unknown());
  t.nics.push_back(nic);
  nic_places.push_back(p);
  return {};
}

// [[nic]]: the NICs. NIC to NIC: the "nic_pcie" row where the file has one (topo --json writes it,
// so a topology read back keeps PXB between NICs under one switch), else from their places.
Status readNics(const Ctx& c, Fields& top, const std::map<std::string, PcieSwitchDef>& switches,
                const std::vector<PciePlace>& gpu_places, NodeTopology& t) {
  std::vector<PciePlace> nic_places;
  std::vector<const toml::array*> nic_rows;  // "nic_pcie": the levels to the other NICs, where given
  if (const toml::array* nics = top.array("nic"))
    for (const auto& e : *nics) RETURN_IF_ERROR(readNic(c, e, switches, gpu_places, t, nic_places, nic_rows));
  for (size_t i = 0; i < t.nics.size(); ++i) {
    if (nic_rows[i] != nullptr) {
      const int k = static_cast<int>(t.nics.size());
      RETURN_IF_ERROR(readLevelRow(c, *nic_rows[i], k, static_cast<int>(i), &t.nics[i].level_to_nic,
                                   "[[nic]] " + t.nics[i].name, "nic_pcie", "NICs"));
      continue;
    }
    for (size_t j = 0; j < t.nics.size(); ++j)
      t.nics[i].level_to_nic.push_back(levelBetween(nic_places[i], nic_places[j]));
  }
  return {};
}

// "free": the GPUs free for placement, sorted; all of them when the file has no list.
Status readFree(const Ctx& c, Fields& top, NodeTopology& t) {
  const int n = static_cast<int>(t.gpus.size());
  if (const toml::array* fr = top.array("free")) {
    t.free_listed = true;
    for (const auto& e : *fr) {
      auto v = e.value<int64_t>();
      if (!e.is_integer() || *v < 0 || *v >= n)
        return Error{c.at(e) + ": \"free\": unknown GPU id " +
                     (e.is_integer() ? std::to_string(*v) : "(not an integer)") + " (GPUs are 0-" +
                     std::to_string(n - 1) + ")"};
      if (std::find(t.free.begin(), t.free.end(), static_cast<int>(*v)) != t.free.end())
        return Error{c.at(e) + ": \"free\": GPU " + std::to_string(*v) + " listed twice"};
      t.free.push_back(static_cast<int>(*v));
    }
  } else {
    for (int i = 0; i < n; ++i) t.free.push_back(i);
  }
  std::sort(t.free.begin(), t.free.end());
  return {};
}

}  // namespace

Result<NodeTopology> parseNode(const Ctx& c, Fields& top) {
  NodeTopology t;
  t.source = c.file;
  RETURN_IF_ERROR(readNodeKeys(top, t));
  RETURN_IF_ERROR(readNuma(c, top, t));
  std::map<std::string, PcieSwitchDef> switches;
  RETURN_IF_ERROR(readSwitches(c, top, switches));
  const toml::array* gpus = top.array("gpu");
  if (!gpus || gpus->empty()) return Error{c.file + ": no [[gpu]] entries (a node file lists its GPUs)"};
  GpuPcie gp;
  RETURN_IF_ERROR(readGpus(c, *gpus, switches, t, gp));
  RETURN_IF_ERROR(pcieMatrix(gp, t));
  RETURN_IF_ERROR(readNvlinks(c, top, gp.gpu_at, t));
  RETURN_IF_ERROR(readNics(c, top, switches, gp.places, t));
  RETURN_IF_ERROR(readFree(c, top, t));
  return t;
}

}  // namespace gpudoctor::topology_file_detail
