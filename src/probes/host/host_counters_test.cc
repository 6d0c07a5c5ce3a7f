// Host counters and rates against fake /proc and /sys trees written by the test, with every
// expected figure worked out by hand (iostat's and vmstat's arithmetic).
#include "probes/host/host_counters.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "analysis/host_rates.h"

namespace gpudoctor {
namespace host_counters_test {
namespace fs = std::filesystem;

void put(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// Two readings 2 s apart of a 2-core host with one NVMe disk (and a partition), eth0, lo, one IB port,
// PSI and one training process.
fs::path fakeTree(const std::string& name, int t) {
  fs::path root = fs::temp_directory_path() / ("gpudoctor_host_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(root);
  // cpu total: user nice system idle iowait irq softirq steal guest guest_nice
  put(root / "proc/stat", t == 0 ? "cpu  1000 0 500 8000 500 0 0 0 0 0\ncpu0 500 0 250 4000 250 0 0 0 0 0\n"
                                   "cpu1 500 0 250 4000 250 0 0 0 0 0\nintr 1 2 3\nctxt 99\n"
                                 : "cpu  1250 0 600 8100 550 0 0 0 100 0\ncpu0 650 0 300 4020 250 0 0 0 0 0\n"
                                   "cpu1 600 0 300 4080 520 0 0 0 0 0\nintr 1 2 3\n");
  put(root / "proc/loadavg", "1.50 1.25 1.00 3/400 12345\n");
  put(root / "proc/meminfo", "MemTotal:       16384 kB\nMemFree:         1024 kB\nMemAvailable:    8192 kB\n");
  // major minor name reads merged sectors ms_read writes merged sectors ms_write in_flight ms_io weighted
  put(root / "proc/diskstats",
      t == 0
          ? " 259 0 nvme0n1 100 0 2000 50 10 0 80 20 0 100 150 0 0 0 0\n 259 1 nvme0n1p1 1 0 8 1 0 0 0 0 0 1 1\n"
            "   7 0 loop0 5 0 10 0 0 0 0 0 0 0 0\n"
          : " 259 0 nvme0n1 300 0 10000 450 30 0 480 60 2 1100 2150 0 0 0 0\n 259 1 nvme0n1p1 2 0 16 2 0 0 0 0 0 2 2\n"
            "   7 0 loop0 9 0 20 0 0 0 0 0 0 0 0\n");
  fs::create_directories(root / "sys/block/nvme0n1");
  fs::create_directories(root / "sys/block/loop0");
  put(root / "proc/net/dev",
      std::string("Inter-|   Receive                                                |  Transmit\n"
                  " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo "
                  "colls carrier compressed\n") +
          (t == 0
               ? "    lo: 100 1 0 0 0 0 0 0 100 1 0 0 0 0 0 0\n  eth0: 1000000 10 0 0 0 0 0 0 2000000 20 0 0 0 0 0 0\n"
               : "    lo: 900 1 0 0 0 0 0 0 900 1 0 0 0 0 0 0\n  eth0: 3000000 10 0 0 0 0 0 0 2500000 20 0 0 0 0 0 "
                 "0\n"));
  put(root / "sys/class/infiniband/mlx5_0/ports/1/counters/port_rcv_data", t == 0 ? "1000\n" : "501000\n");
  put(root / "sys/class/infiniband/mlx5_0/ports/1/counters/port_xmit_data", t == 0 ? "0\n" : "250000\n");
  put(root / "proc/pressure/cpu",
      std::string("some avg10=0.00 avg60=0.00 avg300=0.00 total=") + (t == 0 ? "1000000" : "1200000") + "\n");
  put(root / "proc/pressure/io",
      t == 0 ? "some avg10=1.0 avg60=0 avg300=0 total=500\nfull avg10=0 avg60=0 avg300=0 total=100\n"
             : "some avg10=1.0 avg60=0 avg300=0 total=1000500\nfull avg10=0 avg60=0 avg300=0 total=500100\n");
  put(root / "proc/4242/stat", std::string("4242 (pt_main thread) S 1 1 1 0 -1 0 0 0 0 0 ") +
                                   (t == 0 ? "1000 200" : "1150 250") + " 0 0 20 0 1 0 0 0 0\n");
  return root;
}

TEST(HostCounters, ReadsAFakeTreeAndComputesIostatRates) {
  auto r0 = readHostCounters(fakeTree("t0", 0).string(), {4242, 999999});
  auto r1 = readHostCounters(fakeTree("t1", 1).string(), {4242});
  ASSERT_TRUE(r0.ok()) << r0.error().message;
  ASSERT_TRUE(r1.ok());
  HostCounters a = r0.value(), b = r1.value();
  ASSERT_EQ(a.cpus.size(), 3u);
  ASSERT_EQ(a.disks.size(), 1u);  // whole disk only: no partition, no loop device
  EXPECT_EQ(a.disks[0].name, "nvme0n1");
  ASSERT_EQ(a.nets.size(), 2u);  // eth0 and the IB port; lo skipped
  EXPECT_EQ(a.nets[1].name, "mlx5_0/1");
  EXPECT_EQ(a.nets[1].rx_bytes, 4000u);  // 4-byte words
  ASSERT_EQ(a.procs.size(), 1u);         // a pid that does not exist is skipped
  EXPECT_EQ(a.procs[0].comm, "pt_main thread");
  EXPECT_EQ(a.procs[0].ticks, 1200u);
  EXPECT_EQ(a.mem_total_bytes, 16384u * 1024);
  a.monotonic_ns = 0;
  b.monotonic_ns = 2'000'000'000;
  b.ticks_per_second = 100;
  HostMetrics m = hostRates(a, b);
  // total ticks 10000 -> 10500 (guest excluded): 500; idle +100, iowait +50: busy 350.
  EXPECT_DOUBLE_EQ(m.cpu_util, 350.0 / 500);
  EXPECT_DOUBLE_EQ(m.iowait, 50.0 / 500);
  ASSERT_EQ(m.core_util.size(), 2u);
  EXPECT_DOUBLE_EQ(m.core_util[0], 200.0 / 220);
  EXPECT_DOUBLE_EQ(m.load1, 1.5);
  ASSERT_EQ(m.disks.size(), 1u);
  const DiskRate& d = m.disks[0];
  EXPECT_DOUBLE_EQ(d.reads_per_s, 100);  // 200 reads / 2 s
  EXPECT_DOUBLE_EQ(d.read_bytes_per_s, 8000 * 512 / 2.0);
  EXPECT_DOUBLE_EQ(d.write_bytes_per_s, 400 * 512 / 2.0);
  EXPECT_DOUBLE_EQ(d.read_await_ms, 400.0 / 200);  // r_await
  EXPECT_DOUBLE_EQ(d.write_await_ms, 40.0 / 20);   // w_await
  EXPECT_DOUBLE_EQ(d.util, 1000.0 / 2000);         // %util 50
  EXPECT_DOUBLE_EQ(d.queue, 2000.0 / 2000);        // aqu-sz 1
  ASSERT_EQ(m.nets.size(), 2u);
  EXPECT_DOUBLE_EQ(m.nets[0].rx_bytes_per_s, 1e6);
  EXPECT_DOUBLE_EQ(m.nets[0].tx_bytes_per_s, 250000);
  EXPECT_TRUE(m.nets[1].infiniband);
  EXPECT_DOUBLE_EQ(m.nets[1].rx_bytes_per_s, 500000.0 * 4 / 2);
  EXPECT_DOUBLE_EQ(m.psi_cpu_some, 200000 / 2e6);
  EXPECT_DOUBLE_EQ(m.psi_io_some, 1000000 / 2e6);
  EXPECT_DOUBLE_EQ(m.psi_io_full, 500000 / 2e6);
  EXPECT_DOUBLE_EQ(m.psi_memory_some, -1);  // no memory PSI file
  ASSERT_EQ(m.procs.size(), 1u);
  EXPECT_DOUBLE_EQ(m.procs[0].cpu_cores, 200.0 / 100 / 2);  // 200 ticks at 100/s over 2 s = one core
}

TEST(HostCounters, MissingProcStatIsAnErrorNamingThePath) {
  auto r = readHostCounters("/nonexistent-root");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("/nonexistent-root/proc/stat"), std::string::npos);
}

TEST(HostCounters, ParsersSkipMalformedLines) {
  EXPECT_EQ(parseProcStat("cpu 1 2\ncpu0 a b c d e f g h\n").size(), 0u);
  EXPECT_EQ(parseDiskstats("8 0 sda 1 2\n").size(), 0u);
  EXPECT_EQ(parseNetDev("garbage\n eth0: x\n").size(), 0u);
  ProcCpu p;
  EXPECT_FALSE(parseProcPidStat("12 noparens", p));
  EXPECT_TRUE(parseProcPidStat("12 (a) b) (c) S 1 1 1 0 -1 0 0 0 0 0 7 8 0", p));
  EXPECT_EQ(p.comm, "a) b) (c");
  EXPECT_EQ(p.ticks, 15u);
}

TEST(HostCounters, ThisHost) {
  auto r = readHostCounters("");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_GE(r.value().cpus.size(), 2u);
  EXPECT_GT(r.value().mem_total_bytes, 0u);
}

}  // namespace host_counters_test
}  // namespace gpudoctor
