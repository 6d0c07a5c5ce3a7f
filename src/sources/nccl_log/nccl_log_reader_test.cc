// The NCCL log reader (and the judgement of what it read) on a real NCCL_DEBUG=INFO log (2 x H200, NCCL 2.28.9, made by
// scripts/testdata/make_nccl_log.py) and on hand-written lines in the formats of multi-node IB and socket jobs.
#include "sources/nccl_log/nccl_log_reader.h"

#include <gtest/gtest.h>

#include "diagnosis/nccl_log_check.h"

namespace gpudoctor {
namespace nccl_log_reader_test {
std::string src(const std::string& rel) { return std::string(GPUDOCTOR_SOURCE_DIR) + "/" + rel; }

bool hasFinding(const std::vector<Finding>& f, const std::string& sev, const std::string& text) {
  for (const auto& x : f)
    if (severityName(x.severity) == sev && x.title.find(text) != std::string::npos) return true;
  return false;
}

TEST(NcclLog, RealTwoGpuLog) {
  auto r = readNcclLogs({src("testdata/nccl_logs/ddp_2xh200_info.log")});
  ASSERT_TRUE(r.ok()) << r.error().message;
  const auto& f = r.value();
  EXPECT_EQ(f.versions, std::set<std::string>{"2.28.9+cuda13.0"});
  EXPECT_EQ(f.networks, std::set<std::string>{"Socket"});
  EXPECT_TRUE(f.ib_no_device);
  EXPECT_EQ(f.socket_devices.count("eth0"), 1u);
  ASSERT_EQ(f.comms.size(), 1u);
  const auto& c = f.comms.begin()->second;
  EXPECT_EQ(c.id, "0x71a13e5d87c947c6");
  EXPECT_EQ(c.nranks, 2);
  EXPECT_EQ(c.nnodes, 1);
  EXPECT_EQ(c.local_ranks, 2);
  EXPECT_EQ(c.coll_channels, 24);
  EXPECT_EQ(c.nvls_channels, 0);
  EXPECT_EQ(c.p2p_channels, 32);
  EXPECT_EQ(c.ranks_seen, (std::set<int>{0, 1}));
  EXPECT_TRUE(c.init_complete);
  EXPECT_NEAR(c.init_seconds, 0.33, 1e-9);
  // 24 channels each way between the two GPUs, all through CUDA P2P (cuMem) over NVLink.
  EXPECT_EQ(f.transports.size(), 1u);
  EXPECT_EQ(f.transports.at("P2P/CUMEM"), 48);
  EXPECT_EQ(f.rings.front(), "0 1");
  EXPECT_GT(f.trees, 0);
  EXPECT_EQ(f.settings.at("NCCL_NVLS_ENABLE"), "0");
  EXPECT_EQ(f.settings.at("NCCL_PROTO"), "^LL128");
  EXPECT_EQ(f.plugins.at("TUNER"), "not found (built-in)");
  auto findings = judgeNcclLog(f);
  // A single node on sockets is fine (sockets only bootstrap); NVLS off is reported as info.
  EXPECT_FALSE(hasFinding(findings, "critical", "sockets"));
  EXPECT_TRUE(hasFinding(findings, "info", "NVLS"));
  EXPECT_EQ(findings.size(), 1u);
}

TEST(NcclLog, MultiNodeOnSocketsAndIbWithoutGdr) {
  const std::string sock =
      "n1:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
      "n1:1:1 [0] NCCL INFO NET/IB : No device found.\n"
      "n1:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"
      "n1:1:1 [0] NCCL INFO Using network Socket\n"
      "n1:1:1 [0] NCCL INFO comm 0xabc rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n"
      "n1:1:1 [0] NCCL INFO 2 coll channels, 0 collnet channels, 0 nvls channels, 2 p2p channels, 2 p2p channels per "
      "peer\n"
      "n1:1:1 [0] NCCL INFO Channel 00/0 : 7[7] -> 8[0] [send] via NET/Socket/0\n"
      "n1:1:1 [0] NCCL WARN Call to connect returned Connection refused, retrying\n";
  auto s = readNcclLogText(sock, "sock.log");
  ASSERT_TRUE(s.ok());
  auto fs = judgeNcclLog(s.value());
  EXPECT_TRUE(hasFinding(fs, "critical", "TCP sockets"));
  EXPECT_TRUE(hasFinding(fs, "warning", "only 2 collective channels"));
  EXPECT_TRUE(hasFinding(fs, "warning", "NCCL warned: Call to connect"));
  EXPECT_EQ(s.value().transports.at("NET/Socket"), 1);

  const std::string ib =
      "n2:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ib0:10.1.0.2<0>\n"
      "n2:1:1 [0] NCCL INFO Using network IB\n"
      "n2:1:1 [0] NCCL INFO comm 0xdef rank 8 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n"
      "n2:1:1 [0] NCCL INFO Channel 00/0 : 15[7] -> 0[0] [receive] via NET/IB/0\n"
      "n2:1:1 [0] NCCL INFO Channel 01/0 : 15[7] -> 0[0] [receive] via NET/IB/1\n"
      "n2:1:1 [0] NCCL INFO Channel 00/0 : 8[0] -> 9[1] via P2P/IPC/read\n"
      "n2:1:1 [0] NCCL INFO Channel 00/0 : 8[0] -> 9[1] via SHM/direct/direct\n";
  auto i = readNcclLogText(ib, "ib.log");
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(i.value().ib_devices, (std::set<std::string>{"mlx5_0:1/IB", "mlx5_1:1/IB"}));
  EXPECT_EQ(i.value().transports.at("NET/IB"), 2);
  EXPECT_EQ(i.value().transports.at("P2P/IPC"), 1);
  auto fi = judgeNcclLog(i.value());
  EXPECT_TRUE(hasFinding(fi, "warning", "without GPUDirect RDMA"));
  EXPECT_FALSE(hasFinding(fi, "critical", "TCP sockets"));
  auto gdr = readNcclLogText(ib + "n2:1:1 [0] NCCL INFO Channel 02/0 : 15[7] -> 0[0] [receive] via NET/IB/0/GDRDMA\n",
                             "g.log");
  EXPECT_FALSE(hasFinding(judgeNcclLog(gdr.value()), "warning", "without GPUDirect RDMA"));
}

TEST(NcclLog, NotALog) {
  EXPECT_FALSE(readNcclLogText("hello\nworld\n", "x.log").ok());
  auto r = readNcclLogs({src("testdata/bad/garbage.bin")});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("garbage.bin"), std::string::npos);
  EXPECT_FALSE(readNcclLogs({"/nonexistent/rank0.log"}).ok());
  // Prose that names NCCL (the README) is not a log: its lines have no level after "NCCL".
  auto prose = readNcclLogs({src("README.md")});
  ASSERT_FALSE(prose.ok());
  EXPECT_NE(prose.error().message.find("no NCCL lines"), std::string::npos) << prose.error().message;
  EXPECT_FALSE(readNcclLogText("see the NCCL docs\nset NCCL ALGO here\n", "notes.txt").ok());
}

}  // namespace nccl_log_reader_test
}  // namespace gpudoctor
