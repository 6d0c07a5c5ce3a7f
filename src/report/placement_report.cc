// `gpudoctor place`'s reports (report/topo_report.h): a placement on one node with its bindings and
// the torchrun wrapper, and on a cluster with the scheduler's hints (Kubernetes, Slurm).
#include "report/topo_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "report/topo_format.h"

namespace gpudoctor {

using topo_fmt::gbps;
using topo_fmt::joinInts;
using topo_fmt::joinStrings;

namespace {

std::string indent(const std::string& text, const std::string& pad) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t nl = text.find('\n', i);
    std::string line = text.substr(i, nl == std::string::npos ? std::string::npos : nl - i);
    out += pad + line + "\n";
    i = nl == std::string::npos ? text.size() : nl + 1;
  }
  return out;
}

std::string bindCommand(const RankBinding& r) {
  if (r.numa_node >= 0) return fmt::format("numactl --cpunodebind={0} --membind={0}", r.numa_node);
  if (!r.cpu_list.empty()) return "taskset -c " + r.cpu_list;
  return "";
}

std::string explain(const NodeTopology& t, const NodePlacementReport& r) {
  const NodePlacement& p = r.placement;
  const std::vector<int>& go = r.go_choice;
  const std::vector<int>& free = r.free;
  const PlacementScore& s = p.score;
  int k = static_cast<int>(p.gpus.size());
  std::string why;
  if (k == 1) {
    why = "One GPU needs no ring; it was chosen for NUMA locality and to leave the other free GPUs best connected.";
  } else {
    int min_nv = r.ring_min_nvlinks;
    bool all_nv = r.ring_all_nvlink;
    why = fmt::format("These {} GPUs hold a ring whose slowest hop carries {} per direction", k, gbps(s.ring_gbps));
    if (all_nv)
      why += fmt::format(" ({} NVLink{} or more on every hop)", min_nv, min_nv == 1 ? "" : "s");
    else
      why += " (some hops are PCIe)";
    why += "; no other choice of " + std::to_string(k) + " of the " + std::to_string(free.size()) +
           " free GPUs has a faster slowest hop";
    why += !p.exact         ? " (greedy search: over 16 free GPUs)."
           : p.subsets == 1 ? " (it is the only choice)."
                            : " (all " + std::to_string(p.subsets) + " choices checked exactly).";
  }
  why += fmt::format(" They span {} NUMA node{}", s.numa_nodes, s.numa_nodes == 1 ? "" : "s");
  why += s.numa_nodes == 1 ? ", so each rank's CPU threads and pinned buffers stay on the GPUs' socket." : ".";
  int left = static_cast<int>(free.size()) - k;
  if (left >= 2)
    why += fmt::format(" The {} GPUs left free keep a ring of {} for the next job.", left, gbps(s.leftover_ring_gbps));
  if (!go.empty() && go != p.gpus) {
    const PlacementScore& gs = r.go_score;
    why += fmt::format(
        " go-gpuallocator's best-effort policy (sum of pair scores) would pick {} with a slowest ring hop of "
        "{}{}.",
        joinInts(go), gbps(gs.ring_gbps),
        r.better_than_go ? (gs.ring_gbps < s.ring_gbps ? " — slower for ring collectives"
                                                       : " — equal ring speed but worse on NUMA or leftover")
                         : "");
  } else if (!go.empty()) {
    why += " go-gpuallocator's best-effort policy picks the same GPUs.";
  }
  return why;
}

}  // namespace

// torchrun gives every local rank one environment, so per-rank settings go through a wrapper
// keyed on $LOCAL_RANK; CUDA_VISIBLE_DEVICES (the same for all ranks) lists the chosen GPUs, so local
// rank i drives the i-th of them and gets that GPU's NUMA binding and NIC.
std::string torchrunWrapper(const NodeTopology& t, const NodePlacementReport& r) {
  const NodePlacement& p = r.placement;
  std::string cases;
  for (size_t i = 0; i < p.gpus.size(); ++i) {
    const RankBinding* b = nullptr;
    for (const auto& x : r.ranks)
      if (x.gpu == p.gpus[i]) b = &x;
    if (b == nullptr) continue;
    std::string env =
        b->nic >= 0 && t.nics[b->nic].infiniband ? "export NCCL_IB_HCA=" + t.nics[b->nic].name + "; " : "";
    std::string cmd = bindCommand(*b);
    if (env.empty() && cmd.empty()) continue;
    cases += fmt::format("  {}) {}exec {}\"$@\" ;;   # GPU {}\n", i, env, cmd.empty() ? "" : cmd + " ", p.gpus[i]);
  }
  if (cases.empty()) return {};
  return "#!/bin/sh\n# gpudoctor place: local rank i runs on the i-th GPU of CUDA_VISIBLE_DEVICES=" + joinInts(p.gpus) +
         "\ncase \"$LOCAL_RANK\" in\n" + cases + "esac\nexec \"$@\"\n";
}

std::string renderNodePlacementText(const NodeTopology& t, const NodePlacementReport& r) {
  const NodePlacement& p = r.placement;
  const std::vector<int>& free = r.free;
  std::string out = fmt::format("Best {} of {} free GPUs on {} ({}):\n\n", p.gpus.size(), free.size(),
                                t.name.empty() ? "this node" : t.name, t.source);
  std::string ib_hca = joinStrings(r.ib_hcas);
  out += "  export CUDA_VISIBLE_DEVICES=" + joinInts(p.gpus) + "\n";
  if (!ib_hca.empty()) out += "  export NCCL_IB_HCA=" + ib_hca + "   # all ranks; per rank below\n";
  out += fmt::format("  ring: {}   slowest hop {}   NUMA nodes {}   leftover ring {}\n\n", joinInts(p.ring, " -> "),
                     gbps(p.score.ring_gbps), p.score.numa_nodes,
                     free.size() - p.gpus.size() >= 2 ? gbps(p.score.leftover_ring_gbps) : "-");
  out += "  One process per GPU instead? Start rank r with its own prefix:\n";
  out += "  rank  GPU  NUMA  CPUs              NIC (PCIe)      launch prefix\n";
  for (const auto& rk : r.ranks) {
    std::string nic =
        rk.nic >= 0 ? fmt::format("{} ({})", t.nics[rk.nic].name, pcieLevelName(t.nics[rk.nic].level_to_gpu[rk.gpu]))
                    : "-";
    std::string env = rk.nic >= 0 && t.nics[rk.nic].infiniband ? " NCCL_IB_HCA=" + t.nics[rk.nic].name : "";
    std::string cmd = bindCommand(rk);
    out += fmt::format("  {:<5} {:<4} {:<5} {:<17} {:<15} {}{}\n", rk.rank, rk.gpu,
                       rk.numa_node >= 0 ? std::to_string(rk.numa_node) : "-", rk.cpu_list.empty() ? "-" : rk.cpu_list,
                       nic, "CUDA_VISIBLE_DEVICES=" + std::to_string(rk.gpu) + env, cmd.empty() ? "" : " " + cmd);
  }
  if (std::string w = torchrunWrapper(t, r); !w.empty()) {
    out +=
        "\n  Under torchrun (one environment for every local rank), bind each rank with a wrapper keyed on\n"
        "  LOCAL_RANK, saved as bind.sh (chmod +x):\n";
    out += indent(w, "    ");
    out += fmt::format("  CUDA_VISIBLE_DEVICES={} torchrun --nproc-per-node {} --no-python ./bind.sh python train.py\n",
                       joinInts(p.gpus), p.gpus.size());
  }
  out += "\n" + explain(t, r) + "\n";
  return out;
}

std::string renderNodePlacementJson(const NodeTopology& t, const NodePlacementReport& r) {
  using nlohmann::json;
  const NodePlacement& p = r.placement;
  auto num = [](double v) { return std::isinf(v) ? json(nullptr) : json(v); };
  json j = {{"gpus", p.gpus},
            {"ring", p.ring},
            {"free", r.free},
            {"cuda_visible_devices", joinInts(p.gpus)},
            {"nccl_ib_hca", joinStrings(r.ib_hcas)},
            {"exact", p.exact},
            {"subsets", p.subsets},
            {"rings_evaluated", p.rings_evaluated},
            {"score",
             {{"ring_gbps", num(p.score.ring_gbps)},
              {"numa_nodes", p.score.numa_nodes},
              {"leftover_ring_gbps", p.score.leftover_ring_gbps},
              {"pair_gbps_sum", p.score.pair_gbps_sum},
              {"pcie_level_sum", p.score.pcie_level_sum}}},
            {"go_gpuallocator_best_effort", r.go_choice},
            {"go_gpuallocator_ring_gbps", num(r.go_score.ring_gbps)},
            {"explanation", explain(t, r)},
            {"torchrun_wrapper", torchrunWrapper(t, r)}};
  j["ranks"] = json::array();
  for (const auto& rk : r.ranks) {
    json e = {{"rank", rk.rank},
              {"gpu", rk.gpu},
              {"numa_node", rk.numa_node},
              {"cpus", rk.cpu_list},
              {"bind", bindCommand(rk)}};
    if (rk.nic >= 0) e["nic"] = t.nics[rk.nic].name;
    j["ranks"].push_back(e);
  }
  j["tool"] = "gpudoctor place";
  j["schema_version"] = 1;
  return j.dump(2) + "\n";
}

namespace {

std::string gresLinks(const NodeTopology& t) {
  // Slurm gres.conf: Links= per GPU, -1 for itself and the NVLink count to each other GPU.
  std::string out;
  for (int a = 0; a < t.size(); ++a) {
    std::string links;
    for (int b = 0; b < t.size(); ++b) links += (b ? "," : "") + std::to_string(a == b ? -1 : t.nvlinkCount(a, b));
    // No Cores=: Slurm numbers cores its own way, not as the kernel's CPU list does.
    out += fmt::format("    Name=gpu File=/dev/nvidia{} Links={}\n", a, links);
  }
  return out;
}

}  // namespace

namespace {

// The parts of a cluster placement a scheduler takes, shared by the text and JSON reports.
struct ClusterParts {
  std::string host_list, topology_key, labels, pod_template, topology_conf, sbatch;
};

// Slurm topology/tree: one line per switch, every switch and every host of the file (a line for
// only the chosen hosts would leave Slurm with disconnected leaves and no spines).
std::string slurmTopologyConf(const ClusterTopology& c) {
  std::vector<std::vector<std::string>> nodes(c.switches.size()), children(c.switches.size());
  for (const auto& h : c.hosts)
    if (h.switch_index >= 0) nodes[h.switch_index].push_back(h.name);
  for (const auto& sw : c.switches)
    if (sw.parent >= 0) children[sw.parent].push_back(sw.name);
  std::string out;
  for (size_t i = 0; i < c.switches.size(); ++i) {
    if (nodes[i].empty() && children[i].empty()) continue;
    out += "SwitchName=" + c.switches[i].name;
    if (!children[i].empty()) out += " Switches=" + joinStrings(children[i]);
    if (!nodes[i].empty()) out += " Nodes=" + joinStrings(nodes[i]);
    out += "\n";
  }
  return out;
}

ClusterParts clusterParts(const ClusterTopology& c, const ClusterPlacement& p, int gpn) {
  ClusterParts o;
  for (int h : p.hosts) o.host_list += (o.host_list.empty() ? "" : ",") + c.hosts[h].name;
  const bool one_leaf = p.leaves == 1;
  o.topology_key = one_leaf ? "network.gpudoctor.io/leaf" : "network.gpudoctor.io/spine";
  // Every node of the file gets its labels, so the scheduler can place later jobs too.
  for (const auto& h : c.hosts) {
    if (h.switch_index < 0) continue;
    int spine = c.switches[h.switch_index].parent;
    o.labels += fmt::format("kubectl label node {} network.gpudoctor.io/leaf={}{} --overwrite\n", h.name,
                            c.switches[h.switch_index].name,
                            spine >= 0 ? " network.gpudoctor.io/spine=" + c.switches[spine].name : "");
  }
  std::string values;  // a block sequence: one host per line, however many there are
  for (int h : p.hosts) values += "\n            - " + c.hosts[h].name;
  // A pod template's spec: affinity belongs to the pod, resources to its container.
  o.pod_template = fmt::format(
      "spec:\n"
      "  affinity:\n"
      "    nodeAffinity:\n"
      "      requiredDuringSchedulingIgnoredDuringExecution:\n"
      "        nodeSelectorTerms:\n"
      "        - matchExpressions:\n"
      "          - key: kubernetes.io/hostname\n"
      "            operator: In\n"
      "            values:{}\n"
      "    podAffinity:\n"
      "      requiredDuringSchedulingIgnoredDuringExecution:\n"
      "      - labelSelector: {{matchLabels: {{job: <name>}}}}\n"
      "        topologyKey: {}\n"
      "    podAntiAffinity:   # one pod per node\n"
      "      requiredDuringSchedulingIgnoredDuringExecution:\n"
      "      - labelSelector: {{matchLabels: {{job: <name>}}}}\n"
      "        topologyKey: kubernetes.io/hostname\n"
      "  containers:\n"
      "  - name: <name>\n"
      "    resources:\n"
      "      limits:\n"
      "        nvidia.com/gpu: {}\n",
      values, o.topology_key, gpn);
  o.topology_conf = slurmTopologyConf(c);
  o.sbatch =
      fmt::format("sbatch --nodes={} --nodelist={} --gpus-per-node={} --gpu-bind=closest --ntasks-per-node={} job.sh",
                  p.hosts.size(), o.host_list, gpn, gpn);
  return o;
}

}  // namespace

std::string renderClusterPlacementText(const ClusterTopology& c, const ClusterPlacement& p, int gpn,
                                       const NodePlacement* pn) {
  const ClusterParts parts = clusterParts(c, p, gpn);
  const NetSwitch& top = c.switches[p.lowest_switch];
  std::string out = fmt::format("{} nodes x {} GPUs from {} hosts with enough free GPUs ({}):\n\n", p.hosts.size(), gpn,
                                p.eligible_hosts, c.source);
  for (int h : p.hosts)
    out += fmt::format("  {:<24} leaf {:<16} free {}/{}\n", c.hosts[h].name, c.switches[c.hosts[h].switch_index].name,
                       c.hosts[h].free_gpus, c.hosts[h].gpus);
  out +=
      fmt::format("\n  all under switch {} ({} leaf switch{}); longest path between two of them: {} switch hop{}\n",
                  top.name, p.leaves, p.leaves == 1 ? "" : "es", p.max_switch_hops, p.max_switch_hops == 1 ? "" : "s");
  // Kubernetes: label nodes with their leaf and spine, then keep the job's pods under one of them.
  out +=
      fmt::format("\nKubernetes: label every node of the file with its switches (once; {} nodes):\n", c.hosts.size());
  out += indent(parts.labels, "  ");
  out += fmt::format("then in the job's pod template (all pods share a {} with label job=<name>):\n",
                     p.leaves == 1 ? "leaf" : "spine");
  out += indent(parts.pod_template, "  ");
  out += fmt::format(
      "  (Kueue topology-aware scheduling: annotate the pod set with kueue.x-k8s.io/podset-required-topology: {})\n",
      parts.topology_key);
  out += "  In a pod, the device plugin numbers the GPUs it gives from 0: leave CUDA_VISIBLE_DEVICES to it.\n";
  out += "\nSlurm:\n  " + parts.sbatch + "\n";
  out +=
      "  topology.conf (topology/tree: every switch and host of the file, so Slurm packs jobs under few switches):\n";
  out += indent(parts.topology_conf, "    ");
  if (c.has_node) {
    out += "  gres.conf on each host (Links: NVLinks to each GPU, -1 itself; Slurm packs well-linked GPUs):\n";
    out += gresLinks(c.node);
  }
  if (pn) {
    out += fmt::format("\nOn each host, the best {} of its GPUs: CUDA_VISIBLE_DEVICES={} (ring {}, slowest hop {}).\n",
                       gpn, joinInts(pn->gpus), joinInts(pn->ring, " -> "), gbps(pn->score.ring_gbps));
  }
  out += fmt::format(
      "\nWhy: the {} nodes sit under the lowest switch that has {} hosts with {} free GPUs ({}), so ring and tree "
      "traffic between them crosses at most {} switch{}; below it hosts were taken from as few spines and leaves as "
      "possible and, among equals, those with the fewest spare GPUs first, leaving whole hosts free for larger jobs.\n",
      p.hosts.size(), p.hosts.size(), gpn, top.name, p.max_switch_hops, p.max_switch_hops == 1 ? "" : "es");
  return out;
}

std::string renderClusterPlacementJson(const ClusterTopology& c, const ClusterPlacement& p, int gpn,
                                       const NodePlacement* pn) {
  using nlohmann::json;
  const ClusterParts parts = clusterParts(c, p, gpn);
  json hosts = json::array();
  for (int h : p.hosts)
    hosts.push_back({{"name", c.hosts[h].name},
                     {"leaf", c.switches[c.hosts[h].switch_index].name},
                     {"free", c.hosts[h].free_gpus},
                     {"gpus", c.hosts[h].gpus}});
  json j = {{"hosts", hosts},
            {"gpus_per_node", gpn},
            {"lowest_switch", c.switches[p.lowest_switch].name},
            {"leaves", p.leaves},
            {"max_switch_hops", p.max_switch_hops},
            {"eligible_hosts", p.eligible_hosts},
            {"slurm", fmt::format("--nodes={} --nodelist={} --gpus-per-node={} --gpu-bind=closest --ntasks-per-node={}",
                                  p.hosts.size(), parts.host_list, gpn, gpn)},
            {"slurm_sbatch", parts.sbatch},
            {"slurm_topology_conf", parts.topology_conf},
            {"kubernetes_topology_key", parts.topology_key},
            {"kubernetes_labels", parts.labels},
            {"kubernetes_pod_template", parts.pod_template}};
  if (c.has_node) j["slurm_gres_conf"] = gresLinks(c.node);
  if (pn) j["per_node_gpus"] = pn->gpus;
  j["tool"] = "gpudoctor place";
  j["schema_version"] = 1;
  return j.dump(2) + "\n";
}

}  // namespace gpudoctor
