#include "report/topo_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "report/text.h"
#include "report/topo_format.h"

namespace gpudoctor {

using topo_fmt::gbps;
using topo_fmt::joinInts;
using topo_fmt::joinStrings;

namespace {

std::string nicLevelCell(const TopoNic& n, int g) {
  if (g < 0 || g >= static_cast<int>(n.level_to_gpu.size())) return "-";
  return pcieLevelName(n.level_to_gpu[g]);
}

std::string xmlEscape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"')
      o += "&quot;";
    else if (c == '&')
      o += "&amp;";
    else if (c == '<')
      o += "&lt;";
    else
      o += c;
  }
  return o;
}

// A table (row 0 the header, column 0 the row names; `w` each column's width with its spacing, `align`
// each cell's: '^' centred, '<' left, '>' right) in `width` columns. The columns that fit come first;
// the rest continue in blocks below, each with the row names again (as R prints a wide matrix).
std::string tableBlocks(const std::vector<std::vector<std::string>>& rows, const std::vector<size_t>& w,
                        const std::vector<char>& align, size_t width) {
  std::string out;
  for (size_t from = 1; from < w.size();) {
    size_t to = from + 1, used = w[0] + w[from];
    while (to < w.size() && used + w[to] <= width) used += w[to++];
    if (from > 1) out += "\n";
    for (const auto& r : rows) {
      std::string line = fmt::format("{:<{}}", r[0], w[0]);
      for (size_t c = from; c < to; ++c) {
        const std::string cell = c < r.size() ? r[c] : "";
        line += align[c] == '^'   ? fmt::format("{:^{}}", cell, w[c])
                : align[c] == '>' ? fmt::format("{:>{}}", cell, w[c])
                                  : fmt::format("{:<{}}", cell, w[c]);
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
    from = to;
  }
  return out;
}

}  // namespace

std::string topoCell(const NodeTopology& t, int a, int b) {
  if (a == b) return "X";
  int nv = t.nvlinkCount(a, b);
  if (nv > 0) return "NV" + std::to_string(nv);
  return pcieLevelName(t.pcie[a][b]);
}

std::string renderTopoText(const NodeTopology& t, const std::vector<std::string>& gpu_cpus,
                           const BandwidthMeasurement* m) {
  int n = t.size();
  int k = static_cast<int>(t.nics.size());
  std::vector<std::string> head = {""};
  for (int g = 0; g < n; ++g) head.push_back("GPU" + std::to_string(g));
  for (int i = 0; i < k; ++i) head.push_back("NIC" + std::to_string(i));
  head.push_back("CPU Affinity");
  head.push_back("NUMA Affinity");
  std::vector<std::vector<std::string>> rows = {head};
  for (int a = 0; a < n; ++a) {
    std::vector<std::string> r = {"GPU" + std::to_string(a)};
    for (int b = 0; b < n; ++b) r.push_back(topoCell(t, a, b));
    for (int i = 0; i < k; ++i) r.push_back(nicLevelCell(t.nics[i], a));
    std::string cpus = a < static_cast<int>(gpu_cpus.size()) ? gpu_cpus[a] : "";
    r.push_back(cpus.empty() ? "N/A" : cpus);
    r.push_back(t.gpus[a].numa_node >= 0 ? std::to_string(t.gpus[a].numa_node) : "N/A");
    rows.push_back(r);
  }
  for (int i = 0; i < k; ++i) {
    std::vector<std::string> r = {"NIC" + std::to_string(i)};
    for (int b = 0; b < n; ++b) r.push_back(nicLevelCell(t.nics[i], b));
    for (int j = 0; j < k; ++j)
      r.push_back(
          i == j
              ? "X"
              : (j < static_cast<int>(t.nics[i].level_to_nic.size()) ? pcieLevelName(t.nics[i].level_to_nic[j]) : "-"));
    rows.push_back(r);
  }
  std::vector<size_t> width(head.size(), 0);
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  // The matrix cells centred; the row names and the last two columns (CPU and NUMA affinity) left-aligned.
  std::vector<char> align(head.size(), '<');
  for (size_t c = 0; c < head.size(); ++c) {
    const bool cell = c > 0 && c + 2 < head.size();
    width[c] = (cell ? std::max<size_t>(width[c], 4) : width[c]) + 2;
    if (cell) align[c] = '^';
  }
  // The first line names the file, whole; the rest is laid out in the report's width.
  const std::string title =
      fmt::format("{}{} GPUs, {} NICs ({})\n", t.name.empty() ? "" : t.name + ": ", n, k, t.source);
  std::string out = "\n" + tableBlocks(rows, width, align, textWidth());
  out +=
      "\nLegend:\n\n"
      "  X    = Self\n"
      "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n"
      "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n"
      "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
      "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n"
      "  PIX  = Connection traversing at most a single PCIe bridge\n"
      "  NV#  = Connection traversing a bonded set of # NVLinks\n";
  if (k) {
    out += "\nNIC Legend:\n\n";
    for (int i = 0; i < k; ++i) out += fmt::format("  NIC{}: {}\n", i, t.nics[i].name);
  }
  out += "\nGPUs:\n";
  for (const auto& g : t.gpus)
    out += fmt::format("  GPU{}  {}  {}{}\n", g.index, g.name.empty() ? "?" : g.name,
                       g.pci_bus_id.empty() ? "-" : g.pci_bus_id, g.uuid.empty() ? "" : "  " + g.uuid);
  bool any_switch = std::any_of(t.gpus.begin(), t.gpus.end(), [](const TopoGpu& g) { return g.nvswitch_links > 0; });
  if (any_switch) out += "  NV# between GPUs counts the links both GPUs have into the NVSwitch fabric.\n";
  if (m) {
    out += fmt::format(
        "\nMeasured copy bandwidth, GB/s (median of {} copies of {} MiB; cudaMemcpyPeerAsync for GPU->GPU, "
        "pinned host memory for H2D/D2H):\n\n",
        m->repeats, m->bytes >> 20);
    std::vector<std::vector<std::string>> bw = {{"src\\dst"}};
    for (int b = 0; b < n; ++b) bw[0].push_back("GPU" + std::to_string(b));
    for (const char* c : {"H2D", "D2H"}) bw[0].emplace_back(c);
    for (int a = 0; a < n; ++a) {
      bw.push_back({"GPU" + std::to_string(a)});
      for (int b = 0; b < n; ++b) {
        double v = a < static_cast<int>(m->p2p_gbps.size()) ? m->p2p_gbps[a][b] : 0;
        bw.back().push_back(v > 0 ? fmt::format("{:.1f}", v) : "-");
      }
      double h = a < static_cast<int>(m->h2d_gbps.size()) ? m->h2d_gbps[a] : 0;
      double d = a < static_cast<int>(m->d2h_gbps.size()) ? m->d2h_gbps[a] : 0;
      for (double v : {h, d}) bw.back().push_back(fmt::format("{:.1f}", v));
    }
    std::vector<size_t> bw_width(bw[0].size(), 9);
    bw_width[0] = 10;
    std::vector<char> bw_align(bw[0].size(), '>');
    bw_align[0] = '<';
    out += tableBlocks(bw, bw_width, bw_align, textWidth());
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b)
        if (a != b && a < static_cast<int>(m->p2p_access.size()) && !m->p2p_access[a][b])
          out += fmt::format("  GPU{} -> GPU{}: no peer access; the copy was staged through the host.\n", a, b);
  }
  return title + fitLines(out);  // the prose (legend, names) wrapped; the tables already fit
}

std::string renderTopoJson(const NodeTopology& t, const BandwidthMeasurement* m) {
  using nlohmann::json;
  json j;
  j["format"] = "gpudoctor topology 1";
  j["tool"] = "gpudoctor topo";
  j["schema_version"] = 1;
  if (!t.name.empty()) j["name"] = t.name;
  j["nvlink_gbps"] = t.nvlink_gbps;
  if (t.pcie_gbps > 0) j["pcie_gbps"] = t.pcie_gbps;
  if (!t.cpu_arch.empty()) j["cpu_arch"] = t.cpu_arch;
  if (!t.cpu_vendor.empty()) j["cpu_vendor"] = t.cpu_vendor;
  if (t.cpu_family >= 0) j["cpu_family"] = t.cpu_family;
  if (t.cpu_model >= 0) j["cpu_model"] = t.cpu_model;
  j["numa"] = json::array();
  for (const auto& n : t.numa) j["numa"].push_back({{"id", n.id}, {"cpus", n.cpu_list}});
  j["gpu"] = json::array();
  int n = t.size();
  for (const auto& g : t.gpus) {
    json e = {{"index", g.index}, {"name", g.name}, {"uuid", g.uuid}, {"bus_id", g.pci_bus_id}};
    if (g.numa_node >= 0) e["numa"] = g.numa_node;
    if (!g.cpu_list.empty()) e["cpus"] = g.cpu_list;
    if (g.sm) e["sm"] = g.sm;
    if (g.nvswitch_links) e["nvswitch_links"] = g.nvswitch_links;
    if (g.pcie_gen) e["pcie_gen"] = g.pcie_gen;
    if (g.pcie_width) e["pcie_width"] = g.pcie_width;
    json row = json::array();
    for (int b = 0; b < n; ++b) row.push_back(b == g.index ? "X" : pcieLevelName(t.pcie[g.index][b]));
    e["pcie"] = row;
    j["gpu"].push_back(e);
  }
  j["nvlink"] = json::array();
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b)
      if (t.nvlinks[a][b] > 0) j["nvlink"].push_back({{"gpus", {a, b}}, {"count", t.nvlinks[a][b]}});
  j["nic"] = json::array();
  for (const auto& nic : t.nics) {
    json e = {{"name", nic.name}, {"bus_id", nic.pci_bus_id}, {"infiniband", nic.infiniband}, {"port", nic.port}};
    if (nic.numa_node >= 0) e["numa"] = nic.numa_node;
    if (nic.speed_gbps > 0) e["speed_gbps"] = nic.speed_gbps;
    json row = json::array();
    for (auto l : nic.level_to_gpu) row.push_back(pcieLevelName(l));
    e["pcie"] = row;
    json nics = json::array();
    for (size_t k = 0; k < nic.level_to_nic.size(); ++k)
      nics.push_back(&t.nics[k] == &nic ? std::string("X") : std::string(pcieLevelName(nic.level_to_nic[k])));
    e["nic_pcie"] = nics;
    j["nic"].push_back(e);
  }
  json mat = json::array();
  for (int a = 0; a < n; ++a) {
    json row = json::array();
    for (int b = 0; b < n; ++b) row.push_back(topoCell(t, a, b));
    mat.push_back(row);
  }
  j["nvidia_smi_matrix"] = mat;
  if (m) {
    j["measured"] = {{"p2p_gbps", m->p2p_gbps},
                     {"h2d_gbps", m->h2d_gbps},
                     {"d2h_gbps", m->d2h_gbps},
                     {"bytes", m->bytes},
                     {"repeats", m->repeats}};
    json acc = json::array();
    for (const auto& r : m->p2p_access) acc.push_back(r);
    j["measured"]["p2p_access"] = acc;
  }
  return j.dump(2) + "\n";
}

namespace {

// PCIe switches under a <cpu>, keyed by bus id, with the devices (pre-rendered lines) below each.
struct PciTree {
  std::map<std::string, PciTree> switches;
  std::vector<std::vector<std::string>> devices;
};

void placeDevice(PciTree& root, const std::vector<std::string>& chain, std::vector<std::string> lines) {
  PciTree* at = &root;
  for (const auto& sw : chain) at = &at->switches[sw];
  at->devices.push_back(std::move(lines));
}

void renderTree(const PciTree& t, int indent, std::string& x) {
  std::string pad(indent, ' ');
  for (const auto& lines : t.devices)
    for (const auto& l : lines) x += pad + l + "\n";
  for (const auto& [busid, sub] : t.switches) {
    // A switch's upstream port; NCCL rereads class and fills the link from sysfs on this host.
    x += pad + fmt::format("<pci busid=\"{}\" class=\"0x060400\">\n", busid);
    renderTree(sub, indent + 2, x);
    x += pad + "</pci>\n";
  }
}

}  // namespace

std::string renderNcclXml(const NcclXmlSystem& sys) {
  // PCIe switches nest as NCCL nests them, so NCCL sees the same GPU-NIC paths (PIX/PXB) that
  // decide GPUDirect RDMA.
  std::string x = "<system version=\"1\">\n";
  for (const auto& c : sys.cpus) {
    std::string attrs = fmt::format("numaid=\"{}\"", c.numa);
    if (!c.affinity.empty()) attrs += fmt::format(" affinity=\"{}\"", c.affinity);
    if (!sys.arch.empty()) attrs += fmt::format(" arch=\"{}\"", xmlEscape(sys.arch));
    if (!sys.vendor.empty()) attrs += fmt::format(" vendor=\"{}\"", xmlEscape(sys.vendor));
    if (sys.family >= 0) attrs += fmt::format(" familyid=\"{}\"", sys.family);
    if (sys.model >= 0) attrs += fmt::format(" modelid=\"{}\"", sys.model);
    x += "  <cpu " + attrs + ">\n";
    PciTree tree;
    for (const auto& g : c.gpus) {
      std::vector<std::string> l;
      std::string link;
      if (g.link) link = fmt::format(" link_speed=\"{}\" link_width=\"{}\"", g.link_speed, g.link_width);
      l.push_back(fmt::format("<pci busid=\"{}\" class=\"0x030200\" vendor=\"0x10de\"{}>", g.busid, link));
      // No "gdr": NCCL keeps a value it finds in the file, so it is left for NCCL to detect.
      l.push_back(fmt::format("  <gpu dev=\"{}\" sm=\"{}\" rank=\"{}\">", g.dev, g.sm, g.rank));
      for (const auto& [target, count] : g.nvlinks)
        l.push_back(fmt::format("    <nvlink target=\"{}\" count=\"{}\" tclass=\"0x030200\"/>", target, count));
      // NCCL folds every NVSwitch into one node with this bus id.
      if (g.nvswitch_links > 0)
        l.push_back(
            fmt::format("    <nvlink target=\"fffffff:ff:ff.0\" count=\"{}\" tclass=\"0x068000\"/>", g.nvswitch_links));
      l.push_back("  </gpu>");
      l.push_back("</pci>");
      placeDevice(tree, g.pci_switches, std::move(l));
    }
    for (const auto& n : c.nics) {
      // Only what identifies the device: NCCL fills dev, speed, gdr, maxconn from its network
      // plugin unless the file already has them, and a stale value would win.
      std::string net = fmt::format("<net name=\"{}\" port=\"{}\"/>", xmlEscape(n.name), n.port);
      if (!n.busid.empty())
        placeDevice(tree, n.pci_switches,
                    {fmt::format("<pci busid=\"{}\" class=\"{}\">", n.busid, n.infiniband ? "0x020700" : "0x020000"),
                     "  <nic>", "    " + net, "  </nic>", "</pci>"});
      else
        placeDevice(tree, {}, {"<nic>", "  " + net, "</nic>"});
    }
    renderTree(tree, 4, x);
    x += "  </cpu>\n";
  }
  x += "</system>\n";
  return x;
}

}  // namespace gpudoctor
