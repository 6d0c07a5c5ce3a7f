// Topology files: one node (GPUs, NVLinks, PCIe switches, NUMA nodes, NICs) or a cluster (hosts
// under a leaf/spine switch tree), in TOML or JSON, so placement can be planned and tested without
// the hardware. Every mistake is an Error naming the file, the line (TOML) and the key.
#pragma once
#include <string>

#include "common/result.h"
#include "model/topology.h"

namespace gpudoctor {

struct TopologyFile {
  bool is_cluster = false;  // a file with [[host]] entries
  NodeTopology node;        // a node file (or the cluster's node_topology)
  ClusterTopology cluster;
};

// Reads PATH (JSON when named .json or starting with "{", else TOML) and validates it: unknown keys and GPU ids,
// asymmetric links, cycles in a switch tree, free lists that name GPUs or capacity a host does not have.
Result<TopologyFile> loadTopologyFile(const std::string& path);
// The same from text already in memory; `name` is used in messages (and to tell JSON by ".json").
Result<TopologyFile> parseTopologyText(const std::string& text, const std::string& name);

}  // namespace gpudoctor
