// What topo's renderers are given: CPU lists resolved per GPU and NCCL's XML with its defaults filled.
#include "analysis/topo_view.h"

#include <gtest/gtest.h>

namespace gpudoctor {
namespace {

NodeTopology twoGpus() {
  NodeTopology t;
  t.numa = {{0, "0-3"}, {1, "32-33"}};
  for (int i = 0; i < 2; ++i) {
    TopoGpu g;
    g.index = i;
    g.numa_node = i;
    t.gpus.push_back(g);
  }
  t.gpus[0].pci_bus_id = "0000:1b:00.0";
  t.gpus[0].pcie_gen = 5;
  t.gpus[0].pci_switches = {"0000:15:00.0"};
  t.gpus[1].cpu_list = "40-41";
  t.gpus[1].sm = 80;
  t.nvlinks = {{0, 12}, {12, 0}};
  t.pcie = {{PcieLevel{}, PcieLevel{}}, {PcieLevel{}, PcieLevel{}}};
  TopoNic n;
  n.name = "mlx5_0";
  n.numa_node = 1;
  n.infiniband = true;
  t.nics.push_back(n);
  return t;
}

TEST(TopoView, CpuListsFallBackToTheNumaNode) {
  auto v = gpuCpuLists(twoGpus());
  EXPECT_EQ(v, (std::vector<std::string>{"0-3", "40-41"}));
}

// A topology without a GPU's bus id or SM version gives no XML (issue 20: bus ids were invented,
// so NCCL got a file describing no real machine).
TEST(TopoView, NcclXmlNeedsEveryBusIdAndSm) {
  NodeTopology t = twoGpus();
  EXPECT_NE(ncclXmlMissing(t).find("GPU 1 has no PCI bus id"), std::string::npos) << ncclXmlMissing(t);
  t.gpus[1].pci_bus_id = "0000:11:00.0";
  EXPECT_NE(ncclXmlMissing(t).find("GPU 0 has no SM version"), std::string::npos) << ncclXmlMissing(t);
  t.gpus[0].sm = 90;
  EXPECT_EQ(ncclXmlMissing(t), "");
}

TEST(TopoView, NcclXmlFillsWhatNcclNeeds) {
  NodeTopology t = twoGpus();
  t.gpus[0].sm = 90;
  t.gpus[1].pci_bus_id = "0000:11:00.0";
  ASSERT_EQ(ncclXmlMissing(t), "");
  NcclXmlSystem x = ncclXmlSystem(t);
  ASSERT_EQ(x.cpus.size(), 2u);
  EXPECT_EQ(x.cpus[0].numa, 0);
  EXPECT_EQ(x.cpus[0].affinity, "0000000f");
  EXPECT_EQ(x.cpus[1].affinity, "00000003,00000000");  // CPUs 32-33: the second word
  const NcclXmlGpu& g0 = x.cpus[0].gpus.at(0);
  EXPECT_EQ(g0.busid, "0000:1b:00.0");
  EXPECT_TRUE(g0.link);
  EXPECT_EQ(g0.link_speed, "32.0 GT/s PCIe");
  EXPECT_EQ(g0.link_width, 16);
  EXPECT_EQ(g0.sm, 90);
  EXPECT_EQ(g0.pci_switches, (std::vector<std::string>{"0000:15:00.0"}));
  ASSERT_EQ(g0.nvlinks.size(), 1u);
  EXPECT_EQ(g0.nvlinks[0], (std::pair<std::string, int>{"0000:11:00.0", 12}));
  const NcclXmlGpu& g1 = x.cpus[1].gpus.at(0);
  EXPECT_EQ(g1.busid, "0000:11:00.0");
  EXPECT_FALSE(g1.link);
  EXPECT_EQ(g1.sm, 80);
  ASSERT_EQ(x.cpus[1].nics.size(), 1u);
  EXPECT_EQ(x.cpus[1].nics[0].name, "mlx5_0");
  EXPECT_TRUE(x.cpus[1].nics[0].busid.empty());
}

}  // namespace
}  // namespace gpudoctor
