#include "sources/topology_file/topology_file.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <toml++/toml.h>
#include <nlohmann/json.hpp>

namespace gpudoctor {

namespace {

// Errors carry "file:line: " where the line is known (TOML); JSON input has no line numbers, so
// its messages name the key path instead.
struct Ctx {
  std::string file;
  std::string at(const toml::node& n) const {
    auto line = n.source().begin.line;
    return line ? file + ":" + std::to_string(line) : file;
  }
};

toml::table jsonToToml(const nlohmann::json& j);
void jsonInto(const nlohmann::json& j, toml::array& out);

toml::table jsonToToml(const nlohmann::json& j) {
  toml::table t;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const auto& v = it.value();
    if (v.is_object())
      t.insert(it.key(), jsonToToml(v));
    else if (v.is_array()) {
      toml::array a;
      jsonInto(v, a);
      t.insert(it.key(), std::move(a));
    } else if (v.is_boolean())
      t.insert(it.key(), v.get<bool>());
    else if (v.is_number_integer())
      t.insert(it.key(), v.get<int64_t>());
    else if (v.is_number())
      t.insert(it.key(), v.get<double>());
    else if (v.is_string())
      t.insert(it.key(), v.get<std::string>());
    // null: left out, as if the key were absent
  }
  return t;
}

void jsonInto(const nlohmann::json& j, toml::array& out) {
  for (const auto& v : j) {
    if (v.is_object())
      out.push_back(jsonToToml(v));
    else if (v.is_array()) {
      toml::array a;
      jsonInto(v, a);
      out.push_back(std::move(a));
    } else if (v.is_boolean())
      out.push_back(v.get<bool>());
    else if (v.is_number_integer())
      out.push_back(v.get<int64_t>());
    else if (v.is_number())
      out.push_back(v.get<double>());
    else if (v.is_string())
      out.push_back(v.get<std::string>());
  }
}

// Reads typed fields of one table, remembering which keys were used so leftovers are reported.
class Fields {
 public:
  Fields(const Ctx& c, const toml::table& t, std::string where) : c_(c), t_(t), where_(std::move(where)) {}
  Status integer(const char* key, int* out, bool required = false, int lo = INT32_MIN, int hi = INT32_MAX) {
    used_.insert(key);
    const toml::node* n = t_.get(key);
    if (!n) return required ? missing(key) : Status{};
    auto v = n->value<int64_t>();
    if (!n->is_integer() || !v || *v < lo || *v > hi)
      return Error{c_.at(*n) + ": \"" + std::string(key) + "\" in " + where_ + " must be an integer" +
                   (lo > INT32_MIN ? " >= " + std::to_string(lo) : std::string())};
    *out = static_cast<int>(*v);
    return {};
  }
  Status number(const char* key, double* out, double lo = 0) {
    used_.insert(key);
    const toml::node* n = t_.get(key);
    if (!n) return {};
    auto v = n->value<double>();
    if (!v || n->is_boolean() || *v < lo)
      return Error{c_.at(*n) + ": \"" + std::string(key) + "\" in " + where_ + " must be a number >= " + fmtNum(lo)};
    *out = *v;
    return {};
  }
  Status string(const char* key, std::string* out, bool required = false) {
    used_.insert(key);
    const toml::node* n = t_.get(key);
    if (!n) return required ? missing(key) : Status{};
    auto v = n->value<std::string>();
    if (!v) return Error{c_.at(*n) + ": \"" + std::string(key) + "\" in " + where_ + " must be a string"};
    *out = *v;
    return {};
  }
  Status boolean(const char* key, bool* out) {
    used_.insert(key);
    const toml::node* n = t_.get(key);
    if (!n) return {};
    auto v = n->value<bool>();
    if (!v) return Error{c_.at(*n) + ": \"" + std::string(key) + "\" in " + where_ + " must be true or false"};
    *out = *v;
    return {};
  }
  // The array under key, or null when absent; present but not an array: null, and unknown() reports it.
  const toml::array* array(const char* key) {
    used_.insert(key);
    const toml::node* n = t_.get(key);
    if (n && !n->is_array() && bad_.empty())
      bad_ = c_.at(*n) + ": \"" + std::string(key) + "\" in " + where_ + " must be an array";
    return n ? n->as_array() : nullptr;
  }
  const toml::node* node(const char* key) {
    used_.insert(key);
    return t_.get(key);
  }
  // An error for the first key nobody asked for (a typo would otherwise be silently ignored).
  Status unknown() const {
    if (!bad_.empty()) return Error{bad_};
    for (const auto& [k, v] : t_)
      if (!used_.count(std::string(k.str())))
        return Error{c_.at(v) + ": unknown key \"" + std::string(k.str()) + "\" in " + where_};
    return {};
  }
  std::string at() const { return c_.at(t_); }

 private:
  static std::string fmtNum(double v) {
    std::ostringstream o;
    o << v;
    return o.str();
  }
  Status missing(const char* key) const { return Error{c_.at(t_) + ": " + where_ + " needs \"" + key + "\""}; }
  const Ctx& c_;
  const toml::table& t_;
  std::string where_;
  std::set<std::string> used_;
  std::string bad_;  // the first key of the wrong type (array() cannot return an error itself)
};

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

Result<NodeTopology> parseNode(const Ctx& c, Fields& top) {
  NodeTopology t;
  t.source = c.file;
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

  std::map<std::string, PcieSwitchDef> switches;
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
  // Every switch must reach a root without a cycle, even one no GPU hangs off.
  for (const auto& [id, d] : switches) {
    PciePlace p;
    RETURN_IF_ERROR(resolvePlace(switches, id, &p, d.at));
  }

  const toml::array* gpus = top.array("gpu");
  if (!gpus || gpus->empty()) return Error{c.file + ": no [[gpu]] entries (a node file lists its GPUs)"};
  int n = static_cast<int>(gpus->size());
  std::vector<PciePlace> places(n);
  std::vector<std::vector<PcieLevel>> rows(n);
  std::vector<bool> has_row(n, false);
  std::vector<std::string> gpu_at(n);
  t.gpus.resize(n);
  std::vector<bool> seen(n, false);
  for (const auto& e : *gpus) {
    const toml::table* tb = e.as_table();
    if (!tb) return Error{c.at(e) + ": [[gpu]] entries must be tables"};
    Fields f(c, *tb, "[[gpu]]");
    TopoGpu g;
    RETURN_IF_ERROR(f.integer("index", &g.index, true, 0));
    if (g.index >= n)
      return Error{c.at(*tb) + ": [[gpu]] index " + std::to_string(g.index) + " out of range: " + std::to_string(n) +
                   " GPUs are numbered 0-" + std::to_string(n - 1)};
    if (seen[g.index]) return Error{c.at(*tb) + ": duplicate [[gpu]] index " + std::to_string(g.index)};
    seen[g.index] = true;
    gpu_at[g.index] = c.at(*tb);
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
    PciePlace& p = places[g.index];
    p.numa = g.numa_node;
    if (!sw.empty()) {
      RETURN_IF_ERROR(resolvePlace(switches, sw, &p, c.at(*tb)));
      if (g.numa_node < 0) g.numa_node = p.numa;
    }
    if (!hb.empty()) p.host_bridge = hb;
    if (p.host_bridge.empty()) p.host_bridge = "gpu" + std::to_string(g.index);  // its own root port
    if (const toml::array* row = f.array("pcie")) {
      RETURN_IF_ERROR(readLevelRow(c, *row, n, g.index, &rows[g.index], "[[gpu]] " + std::to_string(g.index)));
      has_row[g.index] = true;
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
  }
  t.pcie.assign(n, std::vector<PcieLevel>(n, PcieLevel::kSystem));
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      if (has_row[a]) {
        t.pcie[a][b] = rows[a][b];
        if (has_row[b] && rows[b][a] != rows[a][b])
          return Error{gpu_at[b] + ": asymmetric PCIe levels: GPU " + std::to_string(a) + " -> " + std::to_string(b) +
                       " is " + pcieLevelName(rows[a][b]) + " but " + std::to_string(b) + " -> " + std::to_string(a) +
                       " is " + pcieLevelName(rows[b][a])};
      } else if (has_row[b]) {
        t.pcie[a][b] = rows[b][a];
      } else {
        t.pcie[a][b] = levelBetween(places[a], places[b]);
      }
    }

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

  std::vector<PciePlace> nic_places;
  std::vector<const toml::array*> nic_rows;  // "nic_pcie": the levels to the other NICs, where given
  if (const toml::array* nics = top.array("nic"))
    for (const auto& e : *nics) {
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
        for (int g = 0; g < n; ++g) nic.level_to_gpu.push_back(levelBetween(p, places[g]));
      }
      nic_rows.push_back(f.array("nic_pcie"));
      RETURN_IF_ERROR(f.unknown());
      t.nics.push_back(nic);
      nic_places.push_back(p);
    }
  // NIC to NIC: the "nic_pcie" row where the file has one (topo --json writes it, so a topology
  // read back keeps PXB between NICs under one switch), else from their places.
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
  return t;
}

Result<ClusterTopology> parseCluster(const Ctx& c, Fields& top, const std::string& path) {
  ClusterTopology k;
  k.source = c.file;
  std::string node_file;
  RETURN_IF_ERROR(top.string("node_topology", &node_file));
  if (!node_file.empty()) {
    std::filesystem::path p(node_file);
    if (p.is_relative()) p = std::filesystem::path(path).parent_path() / p;
    ASSIGN_OR_RETURN(auto nf, loadTopologyFile(p.string()));
    if (nf.is_cluster) return Error{c.file + ": node_topology \"" + node_file + "\" is a cluster file"};
    k.node = nf.node;
    k.has_node = true;
  }
  std::map<std::string, int> sw_index;
  std::vector<std::string> parents, sw_at;
  if (const toml::array* sws = top.array("switch"))
    for (const auto& e : *sws) {
      const toml::table* tb = e.as_table();
      if (!tb) return Error{c.at(e) + ": [[switch]] entries must be tables"};
      Fields f(c, *tb, "[[switch]]");
      NetSwitch s;
      std::string parent;
      RETURN_IF_ERROR(f.string("name", &s.name, true));
      RETURN_IF_ERROR(f.string("parent", &parent));
      RETURN_IF_ERROR(f.unknown());
      if (sw_index.count(s.name)) return Error{c.at(*tb) + ": duplicate [[switch]] \"" + s.name + "\""};
      sw_index[s.name] = static_cast<int>(k.switches.size());
      k.switches.push_back(s);
      parents.push_back(parent);
      sw_at.push_back(c.at(*tb));
    }
  for (size_t i = 0; i < k.switches.size(); ++i) {
    if (parents[i].empty()) continue;
    auto it = sw_index.find(parents[i]);
    if (it == sw_index.end())
      return Error{sw_at[i] + ": [[switch]] \"" + k.switches[i].name + "\": unknown parent \"" + parents[i] + "\""};
    k.switches[i].parent = it->second;
  }
  // Cycles: walking up from any switch must reach a root without meeting a switch twice.
  for (size_t i = 0; i < k.switches.size(); ++i) {
    int cur = static_cast<int>(i);
    std::vector<int> path_ids;
    while (cur >= 0) {
      if (std::find(path_ids.begin(), path_ids.end(), cur) != path_ids.end()) {
        std::string cyc;
        for (int s : path_ids) cyc += k.switches[s].name + " -> ";
        return Error{sw_at[i] + ": cycle in the switch tree: " + cyc + k.switches[cur].name};
      }
      path_ids.push_back(cur);
      cur = k.switches[cur].parent;
    }
  }
  const toml::array* hosts = top.array("host");
  if (!hosts) {  // present (this is a cluster file) but not an array
    RETURN_IF_ERROR(top.unknown());
    return Error{c.file + ": no [[host]] entries"};
  }
  std::set<std::string> names;
  for (const auto& e : *hosts) {
    const toml::table* tb = e.as_table();
    if (!tb) return Error{c.at(e) + ": [[host]] entries must be tables"};
    Fields f(c, *tb, "[[host]]");
    ClusterHost h;
    std::string sw;
    h.gpus = k.has_node ? k.node.size() : 8;
    RETURN_IF_ERROR(f.string("name", &h.name, true));
    RETURN_IF_ERROR(f.string("switch", &sw, true));
    RETURN_IF_ERROR(f.integer("gpus", &h.gpus, false, 0, 4096));
    h.free_gpus = h.gpus;
    RETURN_IF_ERROR(f.integer("free", &h.free_gpus, false, 0));
    RETURN_IF_ERROR(f.unknown());
    if (h.free_gpus > h.gpus)
      return Error{c.at(*tb) + ": [[host]] \"" + h.name + "\": free " + std::to_string(h.free_gpus) +
                   " is more than its " + std::to_string(h.gpus) + " GPUs"};
    if (!names.insert(h.name).second) return Error{c.at(*tb) + ": duplicate [[host]] \"" + h.name + "\""};
    auto it = sw_index.find(sw);
    if (it == sw_index.end()) return Error{c.at(*tb) + ": [[host]] \"" + h.name + "\": unknown switch \"" + sw + "\""};
    h.switch_index = it->second;
    k.hosts.push_back(std::move(h));
  }
  return k;
}

}  // namespace

Result<TopologyFile> parseTopologyText(const std::string& text, const std::string& name) {
  Ctx c{name};
  toml::table doc;
  // JSON by name or by its first character (a TOML document cannot start with "{"), so
  // `topo --json > node.topo` reads back too.
  size_t first = text.find_first_not_of(" \t\r\n");
  bool json = (name.size() >= 5 && name.compare(name.size() - 5, 5, ".json") == 0) ||
              (first != std::string::npos && text[first] == '{');
  if (json) {
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return Error{name + ": not valid JSON (a topology object)"};
    doc = jsonToToml(j);
  } else {
    try {
      doc = toml::parse(text, name);
    } catch (const toml::parse_error& e) {
      auto line = e.source().begin.line;
      return Error{name + (line ? ":" + std::to_string(line) : std::string()) + ": " + std::string(e.description())};
    }
  }
  Fields top(c, doc, "the file");
  TopologyFile out;
  if (doc.get("host")) {
    out.is_cluster = true;
    auto k = parseCluster(c, top, name);
    if (!k.ok()) return k.error();
    out.cluster = std::move(k.value());
    if (out.cluster.hosts.empty()) return Error{name + ": no [[host]] entries"};
  } else {
    ASSIGN_OR_RETURN(out.node, parseNode(c, top));
  }
  RETURN_IF_ERROR(top.unknown());
  return out;
}

Result<TopologyFile> loadTopologyFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Error{path + ": cannot open"};
  std::string text((std::istreambuf_iterator<char>(f)), {});
  if (text.empty()) return Error{path + ": empty file"};
  return parseTopologyText(text, path);
}

}  // namespace gpudoctor
