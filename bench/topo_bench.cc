// Placement benchmark: builds a synthetic 1,000-host cluster file (core, 10 spines, 50 leaves of 20
// hosts, random free GPUs), loads it and places jobs of several shapes; then places K of 16 GPUs
// on a synthetic 16-GPU node exactly. Prints wall times (median of repeats) and what was chosen.
//   topo_bench [HOSTS (1000)] [WRITE_CLUSTER_FILE]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "analysis/placement.h"
#include "sources/topology_file/topology_file.h"

using namespace gpudoctor;
using Clock = std::chrono::steady_clock;

namespace {

double ms(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

template <class F>
double medianMs(int repeats, F f) {
  std::vector<double> t;
  for (int i = 0; i < repeats; ++i) {
    auto a = Clock::now();
    f();
    t.push_back(ms(a, Clock::now()));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

std::string clusterToml(int hosts, int per_leaf, int leaves_per_spine, uint32_t seed) {
  std::string s = "# synthetic cluster\n[[switch]]\nname = \"core\"\n";
  int leaves = (hosts + per_leaf - 1) / per_leaf, spines = (leaves + leaves_per_spine - 1) / leaves_per_spine;
  for (int i = 0; i < spines; ++i) s += "\n[[switch]]\nname = \"spine" + std::to_string(i) + "\"\nparent = \"core\"\n";
  for (int i = 0; i < leaves; ++i)
    s += "\n[[switch]]\nname = \"leaf" + std::to_string(i) + "\"\nparent = \"spine" +
         std::to_string(i / leaves_per_spine) + "\"\n";
  const int free_choices[] = {0, 2, 4, 8, 8, 8};
  for (int h = 0; h < hosts; ++h) {
    seed = seed * 1664525u + 1013904223u;
    s += "\n[[host]]\nname = \"node" + std::to_string(h) + "\"\nswitch = \"leaf" + std::to_string(h / per_leaf) +
         "\"\ngpus = 8\nfree = " + std::to_string(free_choices[(seed >> 16) % 6]) + "\n";
  }
  return s;
}

// 16 GPUs: four NVLink quads (2 links inside a quad, 1 link between quads 0-1 and 2-3 GPU by GPU),
// two sockets, PCIe switches of four.
std::string node16Toml() {
  std::string s =
      "name = \"synthetic-16\"\nnvlink_gbps = 25.0\npcie_gbps = 24.0\n\n[[numa]]\nid = 0\ncpus = "
      "\"0-31\"\n\n[[numa]]\nid = 1\ncpus = \"32-63\"\n";
  for (int w = 0; w < 4; ++w)
    s += "\n[[pcie_switch]]\nid = \"sw" + std::to_string(w) + "\"\nhost_bridge = \"hb" + std::to_string(w) +
         "\"\nnuma = " + std::to_string(w / 2) + "\n";
  for (int g = 0; g < 16; ++g)
    s += "\n[[gpu]]\nindex = " + std::to_string(g) + "\npcie_switch = \"sw" + std::to_string(g / 4) + "\"\n";
  for (int q = 0; q < 4; ++q)
    for (int a = 0; a < 4; ++a)
      for (int b = a + 1; b < 4; ++b)
        s += "\n[[nvlink]]\ngpus = [" + std::to_string(q * 4 + a) + ", " + std::to_string(q * 4 + b) + "]\ncount = 2\n";
  for (int q = 0; q < 4; q += 2)
    for (int a = 0; a < 4; ++a)
      s += "\n[[nvlink]]\ngpus = [" + std::to_string(q * 4 + a) + ", " + std::to_string((q + 1) * 4 + a) +
           "]\ncount = 1\n";
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  int hosts = argc > 1 ? std::atoi(argv[1]) : 1000;
  std::string text = clusterToml(hosts, 20, 5, 12345);
  if (argc > 2) {  // also write the file, to time the CLI on it: gpudoctor place --topology FILE ...
    FILE* f = std::fopen(argv[2], "w");
    if (!f || std::fwrite(text.data(), 1, text.size(), f) != text.size()) return 1;
    std::fclose(f);
  }
  TopologyFile file;
  double load_ms = medianMs(5, [&] {
    auto f = parseTopologyText(text, "synthetic_cluster.toml");
    if (!f.ok()) {
      std::fprintf(stderr, "%s\n", f.error().message.c_str());
      std::exit(1);
    }
    file = std::move(f.value());
  });
  const ClusterTopology& c = file.cluster;
  std::printf("cluster: %zu hosts, %zu switches, %zu KB of TOML; load + validate %.2f ms (median of 5)\n",
              c.hosts.size(), c.switches.size(), text.size() / 1024, load_ms);
  std::printf("%-28s %10s %8s %6s %10s\n", "job", "time ms", "leaves", "hops", "eligible");
  const std::pair<int, int> jobs[] = {{1, 8}, {2, 8}, {16, 8}, {64, 8}, {128, 4}, {400, 2}, {600, 1}};
  double worst = 0;
  for (auto [n, k] : jobs) {
    Result<ClusterPlacement> p = Error{""};
    double t = medianMs(21, [&] { p = placeOnCluster(c, n, k); });
    worst = std::max(worst, t);
    std::string job = std::to_string(n) + " nodes x " + std::to_string(k) + " GPUs";
    if (!p.ok())
      std::printf("%-28s %10.3f  %s\n", job.c_str(), t, p.error().message.c_str());
    else
      std::printf("%-28s %10.3f %8d %6d %10d\n", job.c_str(), t, p.value().leaves, p.value().max_switch_hops,
                  p.value().eligible_hosts);
  }
  std::printf("slowest cluster placement: %.3f ms (median of 21 runs each)\n\n", worst);

  auto nf = parseTopologyText(node16Toml(), "synthetic_16gpu.toml");
  if (!nf.ok()) {
    std::fprintf(stderr, "%s\n", nf.error().message.c_str());
    return 1;
  }
  const NodeTopology& t = nf.value().node;
  std::printf("16-GPU node (4 NVLink quads, 2 sockets), exact search over all K-subsets:\n");
  std::printf("%-4s %10s %10s %10s %12s  %s\n", "K", "time ms", "subsets", "rings", "ring GB/s", "GPUs");
  for (int k : {2, 4, 6, 8, 10, 12, 14}) {
    Result<NodePlacement> p = Error{""};
    double tm = medianMs(5, [&] { p = placeOnNode(t, k); });
    std::string g;
    for (int x : p.value().gpus) g += (g.empty() ? "" : ",") + std::to_string(x);
    std::printf("%-4d %10.2f %10lld %10lld %12.1f  %s\n", k, tm, static_cast<long long>(p.value().subsets),
                static_cast<long long>(p.value().rings_evaluated), p.value().score.ring_gbps, g.c_str());
  }
  return 0;
}
