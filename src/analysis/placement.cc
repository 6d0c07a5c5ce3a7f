#include "analysis/placement.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <unordered_map>

namespace gpudoctor {

namespace {

// The next k-combination of 0..n-1 in lexicographic order (idx sorted, k = idx.size()); false after
// the last one.
bool nextCombination(std::vector<int>& idx, int n) {
  int k = static_cast<int>(idx.size()), i = k - 1;
  while (i >= 0 && idx[i] == n - k + i) --i;
  if (i < 0) return false;
  ++idx[i];
  for (int j = i + 1; j < k; ++j) idx[j] = idx[j - 1] + 1;
  return true;
}

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kMaxExactRing = 20;  // 2^20 DP states: a few MB, milliseconds

// Pair bandwidths of the node, computed once per search.
struct Weights {
  int n = 0;
  std::vector<double> w;  // n x n
  double at(int a, int b) const { return w[a * n + b]; }
  explicit Weights(const NodeTopology& t) : n(t.size()), w(static_cast<size_t>(n) * n, 0) {
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b)
        if (a != b) w[a * n + b] = t.pairGbps(a, b);
  }
};

// Is there a Hamiltonian cycle among m vertices with adjacency bitmasks adj? dp[mask] holds the
// vertices a path from vertex 0 through exactly `mask` can end at. O(2^m * m).
bool hamiltonian(const std::vector<uint32_t>& adj, int m, std::vector<uint32_t>& dp) {
  if (m <= 2) return m == 1 || (adj[0] & 2u);
  uint32_t full = (1u << m) - 1;
  dp.assign(size_t{1} << m, 0);
  dp[1] = 1;
  for (uint32_t mask = 1; mask <= full; mask += 2) {  // masks containing vertex 0
    uint32_t ends = dp[mask];
    while (ends) {
      int v = std::countr_zero(ends);
      ends &= ends - 1;
      uint32_t next = adj[v] & ~mask;
      while (next) {
        int u = std::countr_zero(next);
        next &= next - 1;
        dp[mask | (1u << u)] |= 1u << u;
      }
    }
  }
  return (dp[full] & adj[0]) != 0;
}

void adjacency(const Weights& w, const std::vector<int>& set, double t, std::vector<uint32_t>& adj) {
  int m = static_cast<int>(set.size());
  adj.assign(m, 0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j)
      if (i != j && w.at(set[i], set[j]) >= t) adj[i] |= 1u << j;
}

double ringUpperBound(const Weights& w, const std::vector<int>& set);

// Largest threshold with a Hamiltonian cycle; values at or below `floor` are not looked at (the
// caller only cares whether the ring can reach floor): returns -1 then.
double ringBottleneck(const Weights& w, const std::vector<int>& set, double floor, std::vector<int>* order) {
  int m = static_cast<int>(set.size());
  if (m == 1) return kInf;
  if (m == 2) {
    double v = w.at(set[0], set[1]);
    if (order) *order = set;
    return v < floor ? -1 : v;
  }
  if (m > kMaxExactRing) {
    // Too many for the O(2^m) DP (only leftovers of greedy searches on nodes over 16 GPUs get
    // here): the bound stands in for the ring, and the order is the set as given.
    if (order) *order = set;
    double ub = ringUpperBound(w, set);
    return ub < floor ? -1 : ub;
  }
  thread_local std::vector<uint32_t> adj, dp;
  std::vector<double> vals;
  vals.reserve(m * (m - 1) / 2);
  double min_edge = kInf;
  for (int i = 0; i < m; ++i)
    for (int j = i + 1; j < m; ++j) {
      double v = w.at(set[i], set[j]);
      min_edge = std::min(min_edge, v);
      if (v >= floor) vals.push_back(v);
    }
  // At or below the narrowest link the graph is complete, and a complete graph has a ring.
  auto ringAt = [&](double t) {
    if (t <= min_edge) return true;
    adjacency(w, set, t, adj);
    return hamiltonian(adj, m, dp);
  };
  std::sort(vals.begin(), vals.end());
  vals.erase(std::unique(vals.begin(), vals.end()), vals.end());
  // Binary search over the distinct values: Hamiltonicity is monotone in the threshold. Most sets
  // reach the bound every ring obeys (each GPU's second-widest link), so try that value first.
  int lo = 0, hi = static_cast<int>(vals.size()) - 1, best = -1;
  double ub = ringUpperBound(w, set);
  int at_ub = static_cast<int>(std::upper_bound(vals.begin(), vals.end(), ub) - vals.begin()) - 1;
  if (at_ub < 0) return -1;
  hi = at_ub;
  if (ringAt(vals[at_ub])) {
    best = at_ub;
    lo = at_ub + 1;  // nothing above the bound can hold a ring: done
  } else {
    hi = at_ub - 1;
  }
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (ringAt(vals[mid])) {
      best = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  if (best < 0) return -1;
  if (order) {
    adjacency(w, set, vals[best], adj);
    hamiltonian(adj, m, dp);
    // Walk the DP table back from a last vertex adjacent to vertex 0.
    uint32_t mask = (1u << m) - 1;
    int v = std::countr_zero(dp[mask] & adj[0]);
    std::vector<int> rev;
    while (true) {
      rev.push_back(v);
      uint32_t prev_mask = mask & ~(1u << v);
      if (prev_mask == 0) break;
      int u = std::countr_zero(dp[prev_mask] & adj[v]);
      mask = prev_mask;
      v = u;
    }
    order->clear();
    for (auto it = rev.rbegin(); it != rev.rend(); ++it) order->push_back(set[*it]);
  }
  return vals[best];
}

// An upper bound on the ring bottleneck: every vertex of a ring uses two of its links, so the
// bottleneck is at most each vertex's second-widest link inside the set.
double ringUpperBound(const Weights& w, const std::vector<int>& set) {
  int m = static_cast<int>(set.size());
  if (m == 1) return kInf;
  if (m == 2) return w.at(set[0], set[1]);
  double bound = kInf;
  for (int i = 0; i < m; ++i) {
    double b1 = -1, b2 = -1;
    for (int j = 0; j < m; ++j) {
      if (i == j) continue;
      double v = w.at(set[i], set[j]);
      if (v > b1) {
        b2 = b1;
        b1 = v;
      } else if (v > b2) {
        b2 = v;
      }
    }
    bound = std::min(bound, b2);
  }
  return bound;
}

int numaSpan(const NodeTopology& t, const std::vector<int>& set) {
  std::vector<int> ids;
  for (int g : set) ids.push_back(t.gpus[g].numa_node);
  std::sort(ids.begin(), ids.end());
  return static_cast<int>(std::unique(ids.begin(), ids.end()) - ids.begin());
}

void pairSums(const NodeTopology& t, const Weights& w, const std::vector<int>& set, PlacementScore* s) {
  s->pair_gbps_sum = 0;
  s->pcie_level_sum = 0;
  for (size_t i = 0; i < set.size(); ++i)
    for (size_t j = i + 1; j < set.size(); ++j) {
      s->pair_gbps_sum += w.at(set[i], set[j]);
      s->pcie_level_sum += static_cast<int>(t.pcie[set[i]][set[j]]);
    }
}

// Lexicographic comparison on the first two components only (ring, NUMA): -1 worse, 0 tie, 1 better.
int comparePrefix(double ring_a, int numa_a, const PlacementScore& b) {
  if (ring_a != b.ring_gbps) return ring_a > b.ring_gbps ? 1 : -1;
  if (numa_a != b.numa_nodes) return numa_a < b.numa_nodes ? 1 : -1;
  return 0;
}

Status checkFree(const NodeTopology& t, std::vector<int>& free, int k) {
  if (free.empty()) free = t.freeGpus();
  std::sort(free.begin(), free.end());
  for (size_t i = 0; i < free.size(); ++i) {
    if (free[i] < 0 || free[i] >= t.size())
      return Error{"free GPU " + std::to_string(free[i]) + " is not on this node (GPUs 0-" +
                   std::to_string(t.size() - 1) + ")"};
    if (i && free[i] == free[i - 1]) return Error{"free GPU " + std::to_string(free[i]) + " listed twice"};
  }
  if (t.size() > 64)
    return Error{"nodes of more than 64 GPUs are not supported (this one has " + std::to_string(t.size()) + ")"};
  if (k < 1) return Error{"--gpus must be at least 1"};
  if (k > static_cast<int>(free.size()))
    return Error{"asked for " + std::to_string(k) + " GPUs but only " + std::to_string(free.size()) +
                 " of the node's " + std::to_string(t.size()) + " are free"};
  return {};
}

std::vector<int> leftoverOf(const std::vector<int>& free, const std::vector<int>& set) {
  std::vector<int> left;
  std::set_difference(free.begin(), free.end(), set.begin(), set.end(), std::back_inserter(left));
  return left;
}

}  // namespace

bool betterScore(const PlacementScore& a, const PlacementScore& b) {
  if (a.ring_gbps != b.ring_gbps) return a.ring_gbps > b.ring_gbps;
  if (a.numa_nodes != b.numa_nodes) return a.numa_nodes < b.numa_nodes;
  if (a.leftover_ring_gbps != b.leftover_ring_gbps) return a.leftover_ring_gbps > b.leftover_ring_gbps;
  if (a.pair_gbps_sum != b.pair_gbps_sum) return a.pair_gbps_sum > b.pair_gbps_sum;
  return a.pcie_level_sum < b.pcie_level_sum;
}

bool sameScore(const PlacementScore& a, const PlacementScore& b) { return !betterScore(a, b) && !betterScore(b, a); }

PlacementScore scoreSet(const NodeTopology& t, const std::vector<int>& set_in, const std::vector<int>& free_in) {
  std::vector<int> set = set_in, free = free_in.empty() ? t.freeGpus() : free_in;
  std::sort(set.begin(), set.end());
  std::sort(free.begin(), free.end());
  Weights w(t);
  PlacementScore s;
  s.ring_gbps = ringBottleneck(w, set, -kInf, nullptr);
  s.numa_nodes = numaSpan(t, set);
  auto left = leftoverOf(free, set);
  s.leftover_ring_gbps = left.size() >= 2 ? ringBottleneck(w, left, -kInf, nullptr) : 0;
  if (std::isinf(s.leftover_ring_gbps)) s.leftover_ring_gbps = 0;
  pairSums(t, w, set, &s);
  return s;
}

Result<NodePlacement> placeOnNode(const NodeTopology& t, int k, std::vector<int> free) {
  if (Status s = checkFree(t, free, k); !s.ok()) return Error{s.message()};
  Weights w(t);
  int f = static_cast<int>(free.size());
  NodePlacement best;
  bool have = false;
  std::unordered_map<uint64_t, double> leftover_memo;
  auto consider = [&](const std::vector<int>& set) {
    ++best.subsets;
    double floor = have ? best.score.ring_gbps : -kInf;
    if (have && ringUpperBound(w, set) < floor) return;
    int numa = numaSpan(t, set);
    ++best.rings_evaluated;
    double ring = ringBottleneck(w, set, floor, nullptr);
    if (ring < 0) return;  // cannot reach the best ring so far
    if (have && comparePrefix(ring, numa, best.score) < 0) return;
    PlacementScore s;
    s.ring_gbps = ring;
    s.numa_nodes = numa;
    auto left = leftoverOf(free, set);
    if (left.size() >= 2) {
      uint64_t key = 0;
      for (int g : left) key |= uint64_t{1} << g;
      auto it = leftover_memo.find(key);
      if (it == leftover_memo.end()) it = leftover_memo.emplace(key, ringBottleneck(w, left, -kInf, nullptr)).first;
      s.leftover_ring_gbps = it->second;
    }
    pairSums(t, w, set, &s);
    if (!have || betterScore(s, best.score)) {
      have = true;
      best.score = s;
      best.gpus = set;
    }
  };
  if (f <= 16) {
    // Every K-subset of the free GPUs, in lexicographic order (ties keep the lowest indices).
    std::vector<int> idx(k);
    for (int i = 0; i < k; ++i) idx[i] = i;
    std::vector<int> set(k);
    while (true) {
      for (int i = 0; i < k; ++i) set[i] = free[idx[i]];
      consider(set);
      if (!nextCombination(idx, f)) break;
    }
  } else {
    // Larger nodes: grow from each free GPU, adding the GPU that keeps the score best.
    best.exact = false;
    for (int start : free) {
      std::vector<int> set = {start};
      while (static_cast<int>(set.size()) < k) {
        int pick = -1;
        PlacementScore ps;
        for (int g : free) {
          if (std::find(set.begin(), set.end(), g) != set.end()) continue;
          auto cand = set;
          cand.push_back(g);
          std::sort(cand.begin(), cand.end());
          PlacementScore s;
          s.ring_gbps = ringUpperBound(w, cand);
          s.numa_nodes = numaSpan(t, cand);
          pairSums(t, w, cand, &s);
          if (pick < 0 || betterScore(s, ps)) {
            pick = g;
            ps = s;
          }
        }
        set.push_back(pick);
        std::sort(set.begin(), set.end());
      }
      consider(set);
    }
  }
  best.score = scoreSet(t, best.gpus, free);
  ringBottleneck(w, best.gpus, -kInf, &best.ring);
  if (best.ring.empty()) best.ring = best.gpus;
  return best;
}

int goPairScore(const NodeTopology& t, int a, int b) {
  if (a == b) return 0;
  int score = 100 * t.nvlinkCount(a, b);
  switch (t.pcie[a][b]) {
    case PcieLevel::kSystem:
      score += 10;
      break;
    case PcieLevel::kNode:
      score += 20;
      break;
    case PcieLevel::kHostBridge:
      score += 30;
      break;
    case PcieLevel::kMultiple:
      score += 40;
      break;
    case PcieLevel::kSingle:
      score += 50;
      break;
    case PcieLevel::kInternal:
      score += 60;
      break;
  }
  return score;
}

std::vector<int> placeGoBestEffort(const NodeTopology& t, int k, std::vector<int> free) {
  if (!checkFree(t, free, k).ok()) return {};
  auto setScore = [&](const std::vector<int>& s) {
    int sum = 0;
    for (size_t i = 0; i < s.size(); ++i)
      for (size_t j = i + 1; j < s.size(); ++j)
        if (s[i] >= 0 && s[j] >= 0) sum += goPairScore(t, s[i], s[j]);
    return sum;
  };
  if (k >= static_cast<int>(free.size())) return free;
  // Pad to a multiple of K with empty slots (-1), as go-gpuallocator pads with nil devices.
  std::vector<int> devs = free;
  while (devs.size() % k) devs.push_back(-1);
  int n = static_cast<int>(devs.size());
  std::vector<std::vector<int>> best_partition, cur;
  int best_score = 0;
  bool have = false;
  int64_t partitions = 0;
  constexpr int64_t kMaxPartitions = 2'000'000;  // go-gpuallocator has no cap; ours keeps tests fast
  std::vector<bool> used(n, false);
  std::function<void()> recurse = [&]() {
    if (partitions >= kMaxPartitions) return;
    int first = -1;
    for (int i = 0; i < n; ++i)
      if (!used[i]) {
        first = i;
        break;
      }
    if (first < 0) {
      // go-gpuallocator keeps the padding together: one set holds every empty slot.
      int padded_sets = 0;
      for (const auto& s : cur) padded_sets += std::find(s.begin(), s.end(), -1) != s.end();
      if (padded_sets > 1) return;
      ++partitions;
      int score = 0;
      for (const auto& s : cur) score += setScore(s);
      if (!have || score > best_score) {
        have = true;
        best_score = score;
        best_partition = cur;
      }
      return;
    }
    // The set holding the first unused slot, with every choice of K-1 others after it.
    std::vector<int> rest;
    for (int i = first + 1; i < n; ++i)
      if (!used[i]) rest.push_back(i);
    std::vector<int> pick(k - 1);
    for (int i = 0; i < k - 1; ++i) pick[i] = i;
    int r = static_cast<int>(rest.size());
    used[first] = true;
    while (true) {
      std::vector<int> set = {devs[first]};
      for (int p : pick) {
        used[rest[p]] = true;
        set.push_back(devs[rest[p]]);
      }
      cur.push_back(set);
      recurse();
      cur.pop_back();
      for (int p : pick) used[rest[p]] = false;
      if (!nextCombination(pick, r)) break;
    }
    used[first] = false;
  };
  recurse();
  std::vector<int> best_set;
  int best_set_score = -1;
  for (const auto& s : best_partition) {
    if (std::find(s.begin(), s.end(), -1) != s.end()) continue;  // padding is not a GPU set
    int sc = setScore(s);
    if (sc > best_set_score) {
      best_set_score = sc;
      best_set = s;
    }
  }
  std::sort(best_set.begin(), best_set.end());
  return best_set;
}

std::vector<RankBinding> bindRanks(const NodeTopology& t, const std::vector<int>& gpus) {
  std::vector<RankBinding> out;
  std::vector<int> uses(t.nics.size(), 0);
  for (size_t r = 0; r < gpus.size(); ++r) {
    RankBinding b;
    b.rank = static_cast<int>(r);
    b.gpu = gpus[r];
    const TopoGpu& g = t.gpus[b.gpu];
    b.numa_node = g.numa_node;
    b.cpu_list = g.cpu_list;
    if (b.cpu_list.empty())
      for (const auto& nn : t.numa)
        if (nn.id == g.numa_node) b.cpu_list = nn.cpu_list;
    int best = -1;
    for (size_t i = 0; i < t.nics.size(); ++i) {
      const TopoNic& n = t.nics[i];
      if (n.level_to_gpu.size() != t.gpus.size()) continue;
      if (best < 0) {
        best = static_cast<int>(i);
        continue;
      }
      const TopoNic& o = t.nics[best];
      auto key = [&](const TopoNic& x, int idx) {
        return std::make_tuple(static_cast<int>(x.level_to_gpu[b.gpu]), !x.infiniband, uses[idx]);
      };
      if (key(n, static_cast<int>(i)) < key(o, best)) best = static_cast<int>(i);
    }
    if (best >= 0) ++uses[best];
    b.nic = best;
    out.push_back(b);
  }
  return out;
}

Result<NodePlacementReport> placeOnNodeAndCompare(const NodeTopology& t, int k, std::vector<int> free) {
  if (free.empty()) free = t.freeGpus();
  std::sort(free.begin(), free.end());
  auto p = placeOnNode(t, k, free);
  if (!p.ok()) return p.error();
  NodePlacementReport r;
  r.placement = std::move(p.value());
  r.free = free;
  r.ranks = bindRanks(t, r.placement.gpus);
  r.go_choice = placeGoBestEffort(t, k, free);
  if (!r.go_choice.empty()) r.go_score = scoreSet(t, r.go_choice, free);
  r.better_than_go = betterScore(r.placement.score, r.go_score);
  for (const auto& b : r.ranks)
    if (b.nic >= 0 && t.nics[b.nic].infiniband) {
      std::string h = t.nics[b.nic].name + ":" + std::to_string(t.nics[b.nic].port);
      if (std::find(r.ib_hcas.begin(), r.ib_hcas.end(), h) == r.ib_hcas.end()) r.ib_hcas.push_back(h);
    }
  const std::vector<int>& ring = r.placement.ring;
  if (r.placement.gpus.size() > 1) {
    r.ring_min_nvlinks = 1 << 30;
    for (size_t i = 0; i < ring.size(); ++i) {
      if (r.placement.gpus.size() == 2 && i == 1) break;
      int nv = t.nvlinkCount(ring[i], ring[(i + 1) % ring.size()]);
      if (nv == 0) r.ring_all_nvlink = false;
      r.ring_min_nvlinks = std::min(r.ring_min_nvlinks, nv);
    }
  }
  return r;
}

Result<ClusterPlacement> placeOnCluster(const ClusterTopology& c, int nodes, int gpus_per_node) {
  if (nodes < 1) return Error{"--nodes must be at least 1"};
  if (gpus_per_node < 1) return Error{"--gpus-per-node must be at least 1"};
  int S = static_cast<int>(c.switches.size());
  std::vector<int> eligible_below(S, 0), height(S, 0);
  std::vector<std::vector<int>> children(S), hosts_at(S);
  ClusterPlacement p;
  for (int s = 0; s < S; ++s)
    if (c.switches[s].parent >= 0) children[c.switches[s].parent].push_back(s);
  for (int h = 0; h < static_cast<int>(c.hosts.size()); ++h) {
    const ClusterHost& host = c.hosts[h];
    if (host.free_gpus < gpus_per_node) continue;
    ++p.eligible_hosts;
    hosts_at[host.switch_index].push_back(h);
    for (int s = host.switch_index; s >= 0; s = c.switches[s].parent) ++eligible_below[s];
  }
  if (p.eligible_hosts < nodes)
    return Error{"asked for " + std::to_string(nodes) + " nodes with " + std::to_string(gpus_per_node) +
                 " free GPUs each, but only " + std::to_string(p.eligible_hosts) + " of the " +
                 std::to_string(c.hosts.size()) + " hosts have that many free"};
  // Height above the hosts: a switch with hosts is 1 (a leaf), its parent 2, ...
  for (int h = 0; h < static_cast<int>(c.hosts.size()); ++h) {
    int level = 1;
    for (int s = c.hosts[h].switch_index; s >= 0; s = c.switches[s].parent, ++level)
      height[s] = std::max(height[s], level);
  }
  int chosen = -1;
  for (int s = 0; s < S; ++s) {
    if (eligible_below[s] < nodes) continue;
    // The lowest switch first; among equals the tightest fit, leaving larger blocks for larger jobs.
    if (chosen < 0 || std::tie(height[s], eligible_below[s]) < std::tie(height[chosen], eligible_below[chosen]))
      chosen = s;
  }
  if (chosen < 0)
    return Error{"no single switch tree holds " + std::to_string(nodes) + " hosts with " +
                 std::to_string(gpus_per_node) + " free GPUs (the file has several roots; join them under one)"};
  // Take hosts from as few children as possible: a child that fits the rest alone (tightest) first,
  // otherwise the child with the most eligible hosts.
  std::function<void(int, int)> take = [&](int s, int need) {
    std::vector<int> hs = hosts_at[s];
    std::sort(hs.begin(), hs.end(),
              [&](int a, int b) { return std::tie(c.hosts[a].free_gpus, a) < std::tie(c.hosts[b].free_gpus, b); });
    for (int h : hs) {
      if (need == 0) return;
      p.hosts.push_back(h);
      --need;
    }
    std::vector<int> kids = children[s];
    while (need > 0) {
      int pick = -1;
      for (int k : kids) {
        if (eligible_below[k] == 0) continue;
        if (pick < 0) {
          pick = k;
          continue;
        }
        bool fits_k = eligible_below[k] >= need, fits_p = eligible_below[pick] >= need;
        if (fits_k != fits_p) {
          if (fits_k) pick = k;
        } else if (fits_k ? eligible_below[k] < eligible_below[pick] : eligible_below[k] > eligible_below[pick]) {
          pick = k;
        }
      }
      if (pick < 0) return;
      int n = std::min(need, eligible_below[pick]);
      take(pick, n);
      need -= n;
      kids.erase(std::find(kids.begin(), kids.end(), pick));
    }
  };
  take(chosen, nodes);
  std::sort(p.hosts.begin(), p.hosts.end());
  // The lowest common switch of what was taken, and the leaves used.
  std::vector<int> leaves;
  for (int h : p.hosts) leaves.push_back(c.hosts[h].switch_index);
  std::sort(leaves.begin(), leaves.end());
  leaves.erase(std::unique(leaves.begin(), leaves.end()), leaves.end());
  p.leaves = static_cast<int>(leaves.size());
  int lca = leaves.front();
  auto below = [&](int leaf, int s) {
    for (int x = leaf; x >= 0; x = c.switches[x].parent)
      if (x == s) return true;
    return false;
  };
  while (!std::all_of(leaves.begin(), leaves.end(), [&](int l) { return below(l, lca); })) lca = c.switches[lca].parent;
  p.lowest_switch = lca;
  // Hops between two hosts whose paths meet at switch s: up from each host's leaf to s and down.
  int up = 0;
  for (int l : leaves) {
    int d = 0;
    for (int x = l; x != lca; x = c.switches[x].parent) ++d;
    up = std::max(up, d);
  }
  p.max_switch_hops = p.hosts.size() > 1 ? 2 * up + 1 : 0;
  return p;
}

}  // namespace gpudoctor
