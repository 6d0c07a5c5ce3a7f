#include "report/nccl_log_report.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/text.h"

namespace gpudoctor {

namespace {
template <class C>
std::string join(const C& c) {
  std::string o;
  for (const auto& x : c) o += (o.empty() ? "" : ", ") + std::string(x);
  return o.empty() ? "none" : o;
}
}  // namespace

std::string renderNcclLogText(const NcclLogFacts& f, const std::vector<Finding>& findings) {
  std::string o = fmt::format("gpudoctor nccl log: {} NCCL lines of {}\n", f.nccl_lines, f.lines);
  o += wrapText("NCCL: " + join(f.versions), "  ", textWidth());
  o += wrapText("network: " + join(f.networks) + "; IB devices: " + join(f.ib_devices) +
                    "; socket interfaces: " + join(f.socket_devices),
                "  ", textWidth());
  std::string plugins;
  for (const auto& [k, v] : f.plugins) plugins += (plugins.empty() ? "" : "; ") + k + " " + v;
  if (!plugins.empty()) o += wrapText("plugins: " + plugins, "  ", textWidth());
  std::string tr;
  for (const auto& [k, n] : f.transports) tr += (tr.empty() ? "" : ", ") + fmt::format("{} x{}", k, n);
  o += wrapText("transports (connections): " + (tr.empty() ? std::string("none logged") : tr) +
                    (f.net_connections ? fmt::format("; GPUDirect RDMA on {} of {} network connections",
                                                     f.gdr_connections, f.net_connections)
                                       : ""),
                "  ", textWidth());
  for (const auto& [id, c] : f.comms)
    o += wrapText(fmt::format("communicator {}: {} ranks on {} node(s), {} per node; channels: {} collective, {} NVLS, "
                              "{} P2P{}{}",
                              id.substr(0, 18), c.nranks, c.nnodes, c.local_ranks, c.coll_channels, c.nvls_channels,
                              c.p2p_channels, c.init_complete ? "; init complete" : "; init not completed in the log",
                              c.init_seconds >= 0 ? fmt::format(" in {:.2f} s", c.init_seconds) : ""),
                  "  ", textWidth());
  if (!f.rings.empty())
    o += wrapText(fmt::format("rings: {} channel orders, first: {}", f.rings.size(), f.rings.front()), "  ",
                  textWidth());
  if (f.trees) o += fmt::format("  trees: {} channel entries\n", f.trees);
  if (!f.settings.empty()) {
    std::string s;
    for (const auto& [k, v] : f.settings) s += (s.empty() ? "" : ", ") + k + "=" + v;
    o += wrapText("set by environment: " + s, "  ", textWidth());
  }
  o += findings.empty() ? "\nNo problems found in the log.\n" : "\nFindings\n";
  for (const auto& x : findings) {
    o += wrapText("[" + std::string(severityName(x.severity)) + "] " + x.title, " ", textWidth());
    if (!x.explanation.empty()) o += wrapText("evidence: " + x.explanation, "    ", textWidth());
    o += pasteBlock(x.fix, "    ");
  }
  return o;
}

std::string renderNcclLogJson(const NcclLogFacts& f, const std::vector<Finding>& findings) {
  nlohmann::ordered_json j;
  j["tool"] = "gpudoctor nccl log";
  j["schema_version"] = 1;  // bumped when a field changes meaning or goes away
  j["lines"] = f.lines;
  j["nccl_lines"] = f.nccl_lines;
  j["versions"] = f.versions;
  j["networks"] = f.networks;
  j["ib_devices"] = f.ib_devices;
  j["socket_devices"] = f.socket_devices;
  j["plugins"] = f.plugins;
  j["transports"] = f.transports;
  j["net_connections"] = f.net_connections;
  j["gdr_connections"] = f.gdr_connections;
  nlohmann::ordered_json comms = nlohmann::ordered_json::array();
  for (const auto& [id, c] : f.comms)
    comms.push_back({{"id", id},
                     {"nranks", c.nranks},
                     {"nnodes", c.nnodes},
                     {"local_ranks", c.local_ranks},
                     {"coll_channels", c.coll_channels},
                     {"nvls_channels", c.nvls_channels},
                     {"p2p_channels", c.p2p_channels},
                     {"collnet_channels", c.collnet_channels},
                     {"ranks_seen", c.ranks_seen},
                     {"hosts", c.hosts},
                     {"init_complete", c.init_complete},
                     {"init_seconds", c.init_seconds}});
  j["communicators"] = comms;
  j["rings"] = f.rings;
  j["tree_entries"] = f.trees;
  j["settings"] = f.settings;
  j["warnings"] = f.warnings;
  nlohmann::ordered_json fs = nlohmann::ordered_json::array();
  for (const auto& x : findings)
    fs.push_back({{"severity", severityName(x.severity)},
                  {"title", x.title},
                  {"evidence", x.explanation},
                  {"fix", x.fix.empty() ? std::string() : x.fix.front()}});
  j["findings"] = fs;
  return j.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace gpudoctor
