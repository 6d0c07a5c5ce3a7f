// Every launcher's variables, and the partial or inconsistent ones that must be an error, not a hang.
#include "common/launch_env.h"

#include <gtest/gtest.h>

#include <map>

namespace gpudoctor {
namespace {

Result<LaunchEnv> with(std::map<std::string, std::string> vars) {
  return launchFromEnv([vars](const char* k) -> const char* {
    auto it = vars.find(k);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

TEST(LaunchEnv, Torchrun) {
  auto l = with(
      {{"WORLD_SIZE", "16"}, {"RANK", "9"}, {"LOCAL_RANK", "1"}, {"MASTER_ADDR", "node0"}, {"MASTER_PORT", "29500"}});
  ASSERT_TRUE(l.ok()) << l.error().message;
  EXPECT_TRUE(l.value().joined);
  EXPECT_EQ(l.value().launcher, "torchrun");
  EXPECT_EQ(l.value().rank, 9);
  EXPECT_EQ(l.value().world_size, 16);
  EXPECT_EQ(l.value().local_rank, 1);
  EXPECT_EQ(l.value().master_addr, "node0");
  EXPECT_EQ(l.value().id_port, 29501);  // torchrun's store has 29500
}

TEST(LaunchEnv, OpenMpiAndMpich) {
  auto o = with({{"OMPI_COMM_WORLD_SIZE", "4"},
                 {"OMPI_COMM_WORLD_RANK", "3"},
                 {"OMPI_COMM_WORLD_LOCAL_RANK", "3"},
                 {"MASTER_ADDR", "10.0.0.1"},
                 {"GPUDOCTOR_MASTER_PORT", "40000"}});
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o.value().launcher, "Open MPI");
  EXPECT_EQ(o.value().id_port, 40000);
  auto m = with({{"PMI_SIZE", "2"}, {"PMI_RANK", "1"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1000"}});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m.value().launcher, "MPICH");
  EXPECT_EQ(m.value().local_rank, -1);
  // Open MPI without MASTER_ADDR: says how to pass it.
  auto n = with({{"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_RANK", "0"}});
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.error().message.find("mpirun -x MASTER_ADDR"), std::string::npos);
}

TEST(LaunchEnv, SlurmStepFindsRankZerosHostAndAPort) {
  auto l = with({{"SLURM_STEP_NUM_TASKS", "32"},
                 {"SLURM_PROCID", "17"},
                 {"SLURM_LOCALID", "1"},
                 {"SLURM_NTASKS", "32"},
                 {"SLURM_STEP_NODELIST", "gpu[003-006,010],cpu1"},
                 {"SLURM_JOB_ID", "123456"}});
  ASSERT_TRUE(l.ok()) << l.error().message;
  EXPECT_EQ(l.value().launcher, "Slurm");
  EXPECT_EQ(l.value().master_addr, "gpu003");
  EXPECT_EQ(l.value().id_port, 20000 + 123456 % 20000);
  // A batch script (SLURM_NTASKS but no step): not joined, runs on its own.
  auto b = with({{"SLURM_NTASKS", "32"}, {"SLURM_PROCID", "0"}, {"SLURM_JOB_NODELIST", "gpu[003-006]"}});
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE(b.value().joined);
}

TEST(LaunchEnv, NotLaunchedOrAWorldOfOne) {
  auto none = with({});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none.value().joined);
  auto one = with({{"WORLD_SIZE", "1"}, {"RANK", "0"}});
  ASSERT_TRUE(one.ok());
  EXPECT_FALSE(one.value().joined);
}

TEST(LaunchEnv, PartialOrInconsistentVariablesAreErrors) {
  for (auto vars : std::vector<std::map<std::string, std::string>>{
           {{"WORLD_SIZE", "4"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}},                 // no RANK (was a crash)
           {{"WORLD_SIZE", "4"}, {"RANK", "4"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}},  // rank out of range
           {{"WORLD_SIZE", "four"}, {"RANK", "0"}},                                           // not a number
           {{"WORLD_SIZE", "4"}, {"RANK", "-1"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}},
           {{"WORLD_SIZE", "4"}, {"RANK", "1"}, {"LOCAL_RANK", "x"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}},
           {{"WORLD_SIZE", "4"}, {"RANK", "1"}, {"MASTER_ADDR", "h"}},                            // no port
           {{"WORLD_SIZE", "4"}, {"RANK", "1"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "65535"}},  // 65536
       }) {
    auto l = with(vars);
    EXPECT_FALSE(l.ok()) << vars.begin()->second;
  }
}

TEST(LaunchEnv, SlurmHostLists) {
  EXPECT_EQ(firstSlurmHost("node1,node2"), "node1");
  EXPECT_EQ(firstSlurmHost("n[1-4]"), "n1");
  EXPECT_EQ(firstSlurmHost("a-b[01-02]-ib"), "a-b01-ib");
  EXPECT_EQ(firstSlurmHost("gpu[7,9-10]"), "gpu7");
  EXPECT_EQ(firstSlurmHost("single"), "single");
  EXPECT_EQ(firstSlurmHost("bad[1-2"), "");
}

}  // namespace
}  // namespace gpudoctor
