// The topology model's own helpers: CPU lists and the NUMA node they lie in.
#include "model/topology.h"

#include <gtest/gtest.h>

namespace gpudoctor {
namespace {

TEST(ModelTopology, NumaNodeOfCpus) {
  std::vector<NumaNode> nodes = {{0, "0-15,32-47"}, {1, "16-31,48-63"}};
  EXPECT_EQ(numaNodeOfCpus("0-7", nodes), 0);
  EXPECT_EQ(numaNodeOfCpus("48,16-17", nodes), 1);
  EXPECT_EQ(numaNodeOfCpus("0-31", nodes), -1);  // spans both
  EXPECT_EQ(numaNodeOfCpus("", nodes), -1);
  EXPECT_EQ(numaNodeOfCpus("x", nodes), -1);
  EXPECT_EQ(numaNodeOfCpus("0-3", {}), -1);
}

TEST(ModelTopology, ParseCpuList) {
  EXPECT_EQ(parseCpuList("8,0-3"), (std::vector<int>{0, 1, 2, 3, 8}));
  EXPECT_TRUE(parseCpuList("0-x").empty());
}

}  // namespace
}  // namespace gpudoctor
