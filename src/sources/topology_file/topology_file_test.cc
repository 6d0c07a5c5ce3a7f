// Topology files: the standard ones load; every kind of mistake is one message naming file, line, key.
#include "sources/topology_file/topology_file.h"

#include <gtest/gtest.h>

namespace gpudoctor {
namespace topology_file_test {
std::string errorOf(const std::string& text, const std::string& name = "t.toml") {
  auto r = parseTopologyText(text, name);
  return r.ok() ? "(loaded)" : r.error().message;
}

const char* kTwo = "[[gpu]]\nindex = 0\n\n[[gpu]]\nindex = 1\n";

TEST(TopologyFile, StandardFilesLoad) {
  for (auto name : {"dgx1_v100.toml", "dgx_a100.toml", "dgx_h100.toml", "pcie_8gpu_2socket.toml",
                    "workstation_4gpu_nvlink_pairs.toml", "cluster_small.toml"}) {
    auto f = loadTopologyFile(std::string(GPUDOCTOR_SOURCE_DIR) + "/testdata/topology/" + name);
    EXPECT_TRUE(f.ok()) << name << ": " << (f.ok() ? "" : f.error().message);
  }
}

TEST(TopologyFile, NvlinkErrors) {
  std::string e = errorOf(std::string(kTwo) + "\n[[nvlink]]\ngpus = [0, 2]\ncount = 2\n");
  EXPECT_NE(e.find("t.toml:8"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown GPU id 2"), std::string::npos) << e;
  e = errorOf(std::string(kTwo) + "\n[[nvlink]]\ngpus = [0, 1]\ncount = 2\n\n[[nvlink]]\ngpus = [1, 0]\ncount = 1\n");
  EXPECT_NE(e.find("asymmetric NVLinks"), std::string::npos) << e;
  EXPECT_NE(e.find("t.toml:11"), std::string::npos) << e;
  e = errorOf(std::string(kTwo) + "\n[[nvlink]]\ngpus = [0, 1]\ncount = 19\n");
  EXPECT_NE(e.find("\"count\""), std::string::npos) << e;
}

TEST(TopologyFile, PcieRowsMustBeSymmetric) {
  std::string e =
      errorOf("[[gpu]]\nindex = 0\npcie = [\"X\", \"PIX\"]\n\n[[gpu]]\nindex = 1\npcie = [\"SYS\", \"X\"]\n");
  EXPECT_NE(e.find("asymmetric PCIe levels"), std::string::npos) << e;
  e = errorOf("[[gpu]]\nindex = 0\npcie = [\"X\", \"PIXX\"]\n\n[[gpu]]\nindex = 1\n");
  EXPECT_NE(e.find("unknown level \"PIXX\""), std::string::npos) << e;
}

TEST(TopologyFile, UnknownKeysAndIds) {
  std::string e = errorOf("[[gpu]]\nindex = 0\nnvswich_links = 12\n");
  EXPECT_NE(e.find("t.toml:3: unknown key \"nvswich_links\" in [[gpu]]"), std::string::npos) << e;
  e = errorOf("[[gpu]]\nindex = 0\n\n[[gpu]]\nindex = 0\n");
  EXPECT_NE(e.find("duplicate [[gpu]] index 0"), std::string::npos) << e;
  e = errorOf("free = [0, 5]\n" + std::string(kTwo));
  EXPECT_NE(e.find("unknown GPU id 5"), std::string::npos) << e;
  e = errorOf("[[gpu]]\nindex = 3\n");
  EXPECT_NE(e.find("out of range"), std::string::npos) << e;
  e = errorOf("[[gpu]]\nindex = 0\npcie_switch = \"nowhere\"\n");
  EXPECT_NE(e.find("unknown pcie_switch \"nowhere\""), std::string::npos) << e;
}

TEST(TopologyFile, PcieSwitchCycle) {
  std::string e = errorOf(
      "[[pcie_switch]]\nid = \"a\"\nparent = \"b\"\n\n[[pcie_switch]]\nid = \"b\"\nparent = \"a\"\n\n[[gpu]]\nindex = "
      "0\n"
      "pcie_switch = \"a\"\n");
  EXPECT_NE(e.find("cycle in the PCIe switch tree"), std::string::npos) << e;
}

TEST(TopologyFile, ClusterErrors) {
  std::string e = errorOf(
      "[[switch]]\nname = \"spine\"\nparent = \"leaf\"\n\n[[switch]]\nname = \"leaf\"\nparent = \"spine\"\n\n"
      "[[host]]\nname = \"n1\"\nswitch = \"leaf\"\n");
  EXPECT_NE(e.find("cycle in the switch tree"), std::string::npos) << e;
  EXPECT_NE(e.find("t.toml:1"), std::string::npos) << e;
  e = errorOf("[[switch]]\nname = \"leaf\"\n\n[[host]]\nname = \"n1\"\nswitch = \"leaf2\"\n");
  EXPECT_NE(e.find("t.toml:4: [[host]] \"n1\": unknown switch \"leaf2\""), std::string::npos) << e;
  e = errorOf("[[switch]]\nname = \"leaf\"\n\n[[host]]\nname = \"n1\"\nswitch = \"leaf\"\ngpus = 8\nfree = 9\n");
  EXPECT_NE(e.find("free 9 is more than its 8 GPUs"), std::string::npos) << e;
  e = errorOf("[[switch]]\nname = \"leaf\"\nparent = \"core\"\n\n[[host]]\nname = \"n1\"\nswitch = \"leaf\"\n");
  EXPECT_NE(e.find("unknown parent \"core\""), std::string::npos) << e;
  // A key that must hold tables holding something else: one error, not a crash (host = 1 used to crash).
  e = errorOf("host = 1\n");
  EXPECT_NE(e.find("t.toml:1: \"host\" in the file must be an array"), std::string::npos) << e;
  e = errorOf("nvlink = 3\n" + std::string(kTwo));
  EXPECT_NE(e.find("\"nvlink\" in the file must be an array"), std::string::npos) << e;
  e = errorOf("{\"host\": 5}", "c.json");
  EXPECT_NE(e.find("must be an array"), std::string::npos) << e;
}

TEST(TopologyFile, JsonAndTomlAgree) {
  auto t = parseTopologyText(
      "{\"gpu\": [{\"index\": 0}, {\"index\": 1}], \"nvlink\": [{\"gpus\": [0, 1], \"count\": 18}]}", "x.json");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t.value().node.nvlinkCount(0, 1), 18);
  std::string e = errorOf("{\"gpu\": [{\"index\": 0, \"colour\": 1}]}", "x.json");
  EXPECT_NE(e.find("x.json: unknown key \"colour\" in [[gpu]]"), std::string::npos) << e;
  EXPECT_NE(errorOf("{\"gpu\": [", "x.json").find("not valid JSON"), std::string::npos);
  EXPECT_NE(errorOf("[[gpu]\n").find("t.toml:1"), std::string::npos);
  EXPECT_TRUE(parseTopologyText("\n {\"gpu\": [{\"index\": 0}]}", "node.topo").ok());  // JSON by content
}

}  // namespace topology_file_test
}  // namespace gpudoctor
