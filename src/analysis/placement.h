// Topology-aware placement, as pure functions over the topology model. On a node: the K GPUs whose
// best ring has the widest bottleneck, then the fewest NUMA nodes, then the best-connected leftover,
// found exactly (all K-subsets, pruned) up to 16 free GPUs; NVIDIA go-gpuallocator's best-effort
// heuristic beside it for comparison. On a cluster: the hosts under the lowest common switch.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "model/topology.h"

namespace gpudoctor {

// The objective, compared lexicographically (all "higher is better" after the signs below).
struct PlacementScore {
  // Bottleneck link of the best ring (Hamiltonian cycle) through the set, exactly: the largest threshold
  // at which the links at least that wide still hold a cycle (bitmask DP); inf for 1 GPU. Over 20 GPUs
  // (leftovers on big nodes) the upper bound "each GPU's second-widest link" instead.
  double ring_gbps = 0;
  int numa_nodes = 0;             // NUMA nodes the set spans (fewer is better)
  double leftover_ring_gbps = 0;  // best ring through all free GPUs left over (0 when fewer than 2)
  double pair_gbps_sum = 0;       // every pair's bandwidth summed (tie-break: more links for all-to-all)
  int pcie_level_sum = 0;         // PCIe levels summed (tie-break: shorter paths; lower is better)
};

// True when a is strictly better than b.
bool betterScore(const PlacementScore& a, const PlacementScore& b);
// True when a and b are equal on every component.
bool sameScore(const PlacementScore& a, const PlacementScore& b);

struct NodePlacement {
  std::vector<int> gpus;  // chosen GPU indices, ascending
  std::vector<int> ring;  // the best ring's order (starts at gpus[0])
  PlacementScore score;
  bool exact = true;            // every K-subset considered (false: greedy, over 16 free GPUs)
  int64_t subsets = 0;          // K-subsets of the free GPUs
  int64_t rings_evaluated = 0;  // subsets whose ring was computed (the rest were pruned by a bound)
};

// The objective of choosing `set` out of the free GPUs `free`.
PlacementScore scoreSet(const NodeTopology& t, const std::vector<int>& set, const std::vector<int>& free);
// The best K of the free GPUs (`free` empty: the topology's free list). Errors: K < 1, K larger
// than the free GPUs, a free GPU id the node does not have.
Result<NodePlacement> placeOnNode(const NodeTopology& t, int k, std::vector<int> free = {});

// go-gpuallocator's pair score: NVLink 100 per link plus the PCIe level (SYSTEM 10, NODE 20,
// HOSTBRIDGE 30, MULTIPLE 40, SINGLE 50, INTERNAL 60).
int goPairScore(const NodeTopology& t, int a, int b);
// go-gpuallocator's best-effort policy: the highest-scoring partition of the free GPUs into sets
// of K, then that partition's highest-scoring set (sums of pair scores). Empty when K is invalid.
std::vector<int> placeGoBestEffort(const NodeTopology& t, int k, std::vector<int> free = {});

// What each rank of a placement should bind to.
struct RankBinding {
  int rank = 0;
  int gpu = 0;
  int numa_node = -1;
  std::string cpu_list;
  int nic = -1;  // index into t.nics, -1: none
};
// Rank r runs on gpus[r]; the closest NIC by PCIe level (InfiniBand first, then the least used).
std::vector<RankBinding> bindRanks(const NodeTopology& t, const std::vector<int>& gpus);

// Everything `place` shows for one node, computed here so the renderer only formats: the
// placement, each rank's binding, and go-gpuallocator's choice with its score on our objective.
struct NodePlacementReport {
  NodePlacement placement;
  std::vector<int> free;
  std::vector<RankBinding> ranks;
  std::vector<int> go_choice;
  PlacementScore go_score;
  bool better_than_go = false;       // our score beats go-gpuallocator's (betterScore)
  std::vector<std::string> ib_hcas;  // "mlx5_0:1" of the ranks' InfiniBand NICs, first use first (NCCL_IB_HCA)
  int ring_min_nvlinks = 0;          // the fewest NVLinks on a hop of the ring (2 GPUs: their one hop)
  bool ring_all_nvlink = true;       // every hop of the ring has NVLink
};
// placeOnNode, bindRanks and placeGoBestEffort together.
Result<NodePlacementReport> placeOnNodeAndCompare(const NodeTopology& t, int k, std::vector<int> free = {});

struct ClusterPlacement {
  std::vector<int> hosts;   // indices into ClusterTopology::hosts
  int lowest_switch = -1;   // the switch under which all chosen hosts sit
  int max_switch_hops = 0;  // switches on the longest path between two chosen hosts (1: same leaf)
  int leaves = 0;           // leaf switches the chosen hosts span
  int eligible_hosts = 0;   // hosts with enough free GPUs
};

// N hosts with at least K free GPUs each, under the lowest switch that holds N of them (same leaf
// first, then same spine, ...), spread over as few leaves as possible, fullest-fit hosts first.
Result<ClusterPlacement> placeOnCluster(const ClusterTopology& c, int nodes, int gpus_per_node);

}  // namespace gpudoctor
