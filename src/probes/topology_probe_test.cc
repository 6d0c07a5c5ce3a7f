// Topology discovery against a fake libnvidia-ml.so (scripted per test) and fake sysfs trees: the
// 2 x H200 machine (NV18, NUMA NOT_SUPPORTED in NVML), an 8-GPU NVSwitch box, missing NVML, and a
// driver library that lacks a required symbol.
#include "probes/topology_probe.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "report/topo_report.h"
#include "sources/topology_file/topology_file.h"

namespace gpudoctor {
namespace topology_probe_test {
std::string src(const std::string& rel) { return std::string(GPUDOCTOR_SOURCE_DIR) + "/" + rel; }

Result<NodeTopology> probeWith(const std::string& script, const std::string& root,
                               const std::string& lib = GPUDOCTOR_FAKE_NVML) {
  setenv("GPUDOCTOR_FAKE_NVML", src("testdata/fake_nvml/" + script).c_str(), 1);
  return probeTopology({lib, root.empty() ? "" : src(root)});
}

// The 2 x H200 VM: NVML says NOT_SUPPORTED, sysfs says -1; all CPUs are in node 0, and nvidia-smi
// topo -m prints NUMA Affinity 0 there, as must we (seen on the machine: topo printed N/A).
TEST(TopologyProbe, VmNumaFromCpuAffinity) {
  auto r = probeWith("h200_vm.txt", "testdata/sysroot/topo_vm");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const NodeTopology& t = r.value();
  ASSERT_EQ(t.size(), 2);
  EXPECT_EQ(t.gpus[0].numa_node, 0);
  EXPECT_EQ(t.gpus[1].numa_node, 0);
  std::string text = renderTopoText(t, gpuCpuLists(t));
  EXPECT_NE(text.find("GPU0    X    NV18 0-31          0"), std::string::npos) << text;
  EXPECT_EQ(text.find("N/A"), std::string::npos) << text;
}

TEST(TopologyProbe, TwoH200WithNumaFromSysfs) {
  auto r = probeWith("h200_2gpu.txt", "testdata/sysroot/topo_2gpu");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const NodeTopology& t = r.value();
  ASSERT_EQ(t.size(), 2);
  EXPECT_EQ(t.gpus[0].name, "NVIDIA H200");
  EXPECT_EQ(t.gpus[1].pci_bus_id, "0000:81:00.0");  // NVML's 00000000:81:00.0 normalized
  EXPECT_EQ(t.gpus[0].sm, 90);
  EXPECT_EQ(topoCell(t, 0, 1), "NV18");
  EXPECT_EQ(t.pcie[0][1], PcieLevel::kSystem);
  EXPECT_DOUBLE_EQ(t.nvlink_gbps, 25);
  // NVML said NOT_SUPPORTED: sysfs answered.
  EXPECT_EQ(t.gpus[0].numa_node, 0);
  EXPECT_EQ(t.gpus[1].numa_node, 1);
  EXPECT_EQ(t.gpus[1].cpu_list, "16-31");
  ASSERT_EQ(t.numa.size(), 2u);
  // One NIC: the HCA (its ib0 netdev is the same device and not listed twice).
  ASSERT_EQ(t.nics.size(), 1u);
  EXPECT_EQ(t.nics[0].name, "mlx5_0");
  EXPECT_TRUE(t.nics[0].infiniband);
  EXPECT_DOUBLE_EQ(t.nics[0].speed_gbps, 400);
  EXPECT_EQ(t.nics[0].level_to_gpu[0], PcieLevel::kSingle);
  EXPECT_EQ(t.nics[0].level_to_gpu[1], PcieLevel::kSystem);
  std::string text = renderTopoText(t, gpuCpuLists(t));
  EXPECT_NE(text.find("NV18"), std::string::npos) << text;
  EXPECT_NE(text.find("NIC0: mlx5_0"), std::string::npos) << text;
  // The NCCL XML names both GPUs and the NVLink between them.
  std::string xml = renderNcclXml(ncclXmlSystem(t));
  EXPECT_NE(xml.find("<nvlink target=\"0000:81:00.0\" count=\"18\" tclass=\"0x030200\"/>"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<cpu numaid=\"1\" affinity=\"ffff0000\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("name=\"mlx5_0\""), std::string::npos) << xml;
  // GPU0 and the HCA share a PCIe switch (upstream port 0000:01:00.0), nested as NCCL nests it.
  EXPECT_EQ(t.gpus[0].pci_switches, (std::vector<std::string>{"0000:01:00.0"}));
  EXPECT_TRUE(t.gpus[1].pci_switches.empty());
  EXPECT_NE(xml.find("<pci busid=\"0000:01:00.0\" class=\"0x060400\">\n      <pci busid=\"0000:03:00.0\""),
            std::string::npos)
      << xml;
  // The JSON output reads back as a topology file with the same matrix.
  auto back = parseTopologyText(renderTopoJson(t), "probe.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(topoCell(back.value().node, 0, 1), "NV18");
  EXPECT_EQ(back.value().node.nics[0].level_to_gpu[0], PcieLevel::kSingle);
}

TEST(TopologyProbe, EightGpuNvSwitchBox) {
  auto r = probeWith("hgx_h100_8gpu.txt", "");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const NodeTopology& t = r.value();
  ASSERT_EQ(t.size(), 8);
  for (int a = 0; a < 8; ++a)
    for (int b = 0; b < 8; ++b)
      if (a != b) {
        EXPECT_EQ(topoCell(t, a, b), "NV18");
      }
  EXPECT_EQ(t.gpus[5].numa_node, 1);  // from NVML this time
  EXPECT_EQ(t.gpus[5].cpu_list, "56-111");
  EXPECT_EQ(t.pcie[0][1], PcieLevel::kSingle);
  EXPECT_EQ(t.pcie[0][2], PcieLevel::kNode);
  std::string xml = renderNcclXml(ncclXmlSystem(t));
  EXPECT_NE(xml.find("<nvlink target=\"fffffff:ff:ff.0\" count=\"18\" tclass=\"0x068000\"/>"), std::string::npos)
      << xml;
}

TEST(TopologyProbe, MissingLibraryAndMissingSymbol) {
  auto none = probeTopology({"/nonexistent/libnvidia-ml.so.1", ""});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("cannot load NVML"), std::string::npos) << none.error().message;
  auto old = probeWith("h200_2gpu.txt", "", GPUDOCTOR_FAKE_NVML_NO_ANCESTOR);
  ASSERT_FALSE(old.ok());
  EXPECT_NE(old.error().message.find("has no nvmlDeviceGetTopologyCommonAncestor"), std::string::npos)
      << old.error().message;
}

TEST(TopologyProbe, SysfsLevels) {
  std::string hb = "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/";
  EXPECT_EQ(sysfsPcieLevel(hb + "0000:02:00.0/0000:03:00.0", hb + "0000:02:01.0/0000:04:00.0", 0, 0),
            PcieLevel::kSingle);
  EXPECT_EQ(sysfsPcieLevel(hb + "0000:02:00.0/0000:03:00.0/0000:05:00.0/0000:06:00.0", hb + "0000:02:01.0/0000:04:00.0",
                           0, 0),
            PcieLevel::kMultiple);
  EXPECT_EQ(sysfsPcieLevel("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0",
                           "/sys/devices/pci0000:00/0000:00:02.0/0000:02:00.0", 0, 0),
            PcieLevel::kHostBridge);
  EXPECT_EQ(sysfsPcieLevel("/sys/devices/pci0000:00/a", "/sys/devices/pci0000:40/b", 0, 0), PcieLevel::kNode);
  EXPECT_EQ(sysfsPcieLevel("/sys/devices/pci0000:00/a", "/sys/devices/pci0000:80/b", 0, 1), PcieLevel::kSystem);
  EXPECT_EQ(normalizeBusId("00000000:1A:00.0"), "0000:1a:00.0");
  EXPECT_EQ(ncclPciParents(hb + "0000:02:00.0/0000:03:00.0/0000:05:00.0/0000:06:00.0"),
            (std::vector<std::string>{"0000:01:00.0", "0000:03:00.0"}));
  EXPECT_TRUE(ncclPciParents("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0").empty());
}

}  // namespace topology_probe_test
}  // namespace gpudoctor
