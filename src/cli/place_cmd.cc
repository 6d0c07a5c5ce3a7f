// `gpudoctor place`: the best GPUs of a node for a job (with CPU/NIC binding and why), or the best
// nodes of a cluster (with Kubernetes and Slurm hints), from this machine or a topology file.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <sstream>

#include "analysis/placement.h"
#include "cli/commands.h"
#include "cli/json_output.h"
#include "probes/topology_probe.h"
#include "report/text.h"
#include "report/topo_report.h"
#include "sources/topology_file/topology_file.h"

namespace gpudoctor::cli {

namespace {

struct PlaceArgs {
  int gpus = 0, nodes = 0, gpus_per_node = 0;
  std::string topology, free, sysfs_root, nvml_library;
  bool include_busy = false;
  std::string json;
};

// "0,1,4-7" -> {0,1,4,5,6,7}; false on anything else.
bool parseGpuList(const std::string& s, std::vector<int>* out) {
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, ',')) {
    if (part.empty()) return false;
    auto dash = part.find('-');
    try {
      size_t used = 0;
      int a = std::stoi(part.substr(0, dash), &used);
      if (used != (dash == std::string::npos ? part.size() : dash)) return false;
      int b = a;
      if (dash != std::string::npos) {
        std::string rest = part.substr(dash + 1);
        b = std::stoi(rest, &used);
        if (used != rest.size()) return false;
      }
      if (a < 0 || b < a || b > 4096) return false;
      for (int g = a; g <= b; ++g) out->push_back(g);
    } catch (...) {
      return false;
    }
  }
  return !out->empty();
}

int runPlace(const PlaceArgs& a) {
  // One node or a cluster: a flag of the other kind would be ignored, so it is refused.
  if (a.nodes > 0 && (a.gpus > 0 || !a.free.empty() || a.include_busy))
    return fail(std::string(a.gpus > 0        ? "--gpus"
                            : !a.free.empty() ? "--free"
                                              : "--include-busy") +
                    " is for one node; --nodes places on a cluster with --gpus-per-node K per node",
                kUsage);
  if (a.nodes == 0 && a.gpus_per_node > 0)
    return fail("--gpus-per-node is for a cluster (--nodes N --topology cluster.toml); one node takes --gpus K",
                kUsage);
  if (a.nodes > 0) {
    if (a.topology.empty())
      return fail("--nodes places on a cluster: give its file with --topology cluster.toml", kUsage);
    if (a.gpus_per_node <= 0) return fail("--nodes needs --gpus-per-node K", kUsage);
    auto f = loadTopologyFile(a.topology);
    if (!f.ok()) return fail(f.error().message, kBadInput);
    if (!f.value().is_cluster) return fail(a.topology + ": not a cluster file (it has no [[host]] entries)", kBadInput);
    const ClusterTopology& c = f.value().cluster;
    auto p = placeOnCluster(c, a.nodes, a.gpus_per_node);
    if (!p.ok()) return fail(a.topology + ": " + p.error().message, kGateFailed);  // no placement fits
    std::unique_ptr<NodePlacement> per_node;
    if (c.has_node && a.gpus_per_node <= c.node.size()) {
      auto np = placeOnNode(c.node, a.gpus_per_node, {});
      if (np.ok()) per_node = std::make_unique<NodePlacement>(np.value());
    }
    std::string json = a.json.empty() ? "" : renderClusterPlacementJson(c, p.value(), a.gpus_per_node, per_node.get());
    std::string text =
        jsonOnly(a.json) ? "" : fitLines(renderClusterPlacementText(c, p.value(), a.gpus_per_node, per_node.get()));
    if (std::string err = writeOutputs(a.json, text, json); !err.empty()) return fail(err, kBadInput);
    return 0;
  }
  if (a.gpus <= 0) return fail("give --gpus K (one node) or --nodes N --gpus-per-node K (a cluster)", kUsage);
  NodeTopology t;
  std::string where;
  if (!a.topology.empty()) {
    auto f = loadTopologyFile(a.topology);
    if (!f.ok()) return fail(f.error().message, kBadInput);
    if (f.value().is_cluster) return fail(a.topology + " is a cluster file: use --nodes N --gpus-per-node K", kUsage);
    t = f.value().node;
    where = a.topology + ": ";
  } else {
    auto p = probeTopology({a.nvml_library, a.sysfs_root});
    if (!p.ok()) return fail(p.error().message + "; or give --topology FILE", kNoDevice);
    t = std::move(p.value());
  }
  std::vector<int> free;
  if (!a.free.empty() && !parseGpuList(a.free, &free))
    return fail("--free must list GPU indices like 0,1,4-7, not \"" + a.free + "\"", kUsage);
  if (free.empty()) {
    free = t.freeGpus();
    // A GPU a process runs on is not offered (it was: "GPU 0 free" at 97 % with two processes).
    for (const auto& g : t.gpus) {
      if (g.pids.empty()) continue;
      if (a.include_busy) {
        free.push_back(g.index);
        continue;
      }
      std::string pids;
      for (size_t i = 0; i < g.pids.size() && i < 4; ++i) pids += (i ? ", " : "") + std::to_string(g.pids[i]);
      if (g.pids.size() > 4) pids += ", ...";
      std::fprintf(stderr, "gpudoctor: place: GPU %d runs %zu process%s (%s): not offered (--include-busy offers it)\n",
                   g.index, g.pids.size(), g.pids.size() == 1 ? "" : "es", pids.c_str());
    }
    std::sort(free.begin(), free.end());
    free.erase(std::unique(free.begin(), free.end()), free.end());
  }
  auto r = placeOnNodeAndCompare(t, a.gpus, free);
  if (!r.ok()) return fail(where + r.error().message, kGateFailed);  // no placement fits
  std::string json = a.json.empty() ? "" : renderNodePlacementJson(t, r.value());
  std::string text = jsonOnly(a.json) ? "" : fitLines(renderNodePlacementText(t, r.value()));
  if (std::string err = writeOutputs(a.json, text, json); !err.empty()) return fail(err, kBadInput);
  return 0;
}

}  // namespace

std::function<int()> addPlace(CLI::App& app) {
  auto a = std::make_shared<PlaceArgs>();
  auto* cmd = app.add_subcommand(
      "place",
      "Topology-aware placement. One node (--gpus K): the K free GPUs whose ring has the widest slowest hop, then "
      "the fewest NUMA nodes, then the best-connected GPUs left for the next job (exact up to 16 free GPUs); prints "
      "CUDA_VISIBLE_DEVICES, numactl/taskset and NCCL_IB_HCA per rank and why. A cluster (--nodes N "
      "--gpus-per-node K --topology cluster.toml): N hosts under the lowest common switch, with Kubernetes affinity "
      "and Slurm lines.");
  cmd->add_option("--gpus", a->gpus, "GPUs for the job on one node")->check(CLI::Range(1, 4096));
  cmd->add_option("--topology", a->topology, "Topology file (node or cluster, TOML or JSON); default: this machine")
      ->type_name("FILE");
  cmd->add_flag("--include-busy", a->include_busy,
                "Also offer GPUs that compute processes run on (probed nodes; by default they are left out)");
  cmd->add_option("--free", a->free, "Free GPUs (default: the file's free list, or all), e.g. 0,1,4-7")
      ->type_name("LIST");
  cmd->add_option("--nodes", a->nodes, "Nodes for the job (cluster placement)")->check(CLI::Range(1, 1000000));
  cmd->add_option("--gpus-per-node", a->gpus_per_node, "GPUs per node (cluster placement)")->check(CLI::Range(1, 4096));
  addJsonOption(cmd, &a->json, "the placement");
  cmd->add_option("--sysfs-root", a->sysfs_root, "Root of /sys and /proc (tests)")->type_name("DIR")->group("");
  cmd->add_option("--nvml-library", a->nvml_library, "libnvidia-ml.so.1 to load")->type_name("PATH");
  return [a] { return runPlace(*a); };
}

}  // namespace gpudoctor::cli
