#include "sources/topology_file/topology_file.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <toml++/toml.h>
#include <nlohmann/json.hpp>

#include "sources/topology_file/parse.h"

namespace gpudoctor {

using topology_file_detail::Ctx;
using topology_file_detail::Fields;
using topology_file_detail::parseNode;

namespace {

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
