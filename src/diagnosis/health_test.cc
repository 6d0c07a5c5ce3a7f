// Each live health flag and each reason a red GPU-utilization flag can give, on hand-made samples.
#include "diagnosis/health.h"

#include <gtest/gtest.h>

#include <functional>

namespace gpudoctor {
namespace health_test {
MonitorSample base() {
  MonitorSample s;
  s.interval_s = 1;
  s.host.cpu_util = 0.3;
  s.host.iowait = 0.01;
  GpuMetrics g;
  g.util_gpu = 0.5;
  g.memory_total_bytes = 100;
  g.memory_used_bytes = 50;
  g.pids = {7};
  s.gpus.push_back(g);
  return s;
}

const HealthFlag* find(const std::vector<HealthFlag>& v, const std::string& subject, const std::string& check) {
  for (const auto& f : v)
    if (f.subject == subject && f.check == check) return &f;
  return nullptr;
}

TEST(Health, EachReasonForAnIdleGpu) {
  Thresholds t = Thresholds::defaults();
  struct Case {
    std::function<void(MonitorSample&)> set;
    std::string bottleneck, reason_part;
  };
  std::vector<Case> cases = {
      {[](MonitorSample& s) { s.host.iowait = 0.3; }, "input", "IO wait 30 %"},
      {[](MonitorSample& s) { s.host.cpu_util = 0.95; }, "host-cpu", "host CPU 95 % busy"},
      {[](MonitorSample& s) {
         s.host.procs = {{7, "python", 0.99}};
       },
       "host-cpu", "one core 100 % busy"},
      {[](MonitorSample& s) { s.gpus[0].pids.clear(); }, "no-process", "no process"},
      {[](MonitorSample& s) { s.gpus[0].nvlink_rx_bytes_per_s = 2e9; }, "communication", "2.0 GB/s"},
      {[](MonitorSample&) {}, "other", "gpudoctor analyze"},
  };
  for (const auto& c : cases) {
    MonitorSample s = base();
    c.set(s);
    SCOPED_TRACE(c.bottleneck);
    EXPECT_EQ(gpuBottleneck(s, s.gpus[0], t), c.bottleneck);
    auto flags = judgeHealth(s, t);
    const HealthFlag* f = find(flags, "gpu0", "gpu_util");
    ASSERT_NE(f, nullptr);
    EXPECT_FALSE(f->ok);
    EXPECT_DOUBLE_EQ(f->value, 0.5);
    EXPECT_DOUBLE_EQ(f->threshold, 0.9);
    EXPECT_NE(f->reason.find(c.reason_part), std::string::npos) << f->reason;
  }
}

TEST(Health, HostMemoryClocksAndLostFlags) {
  Thresholds t = Thresholds::defaults();
  MonitorSample s = base();
  s.gpus[0].util_gpu = 0.95;
  s.gpus[0].memory_used_bytes = 97;
  s.gpus[0].throttle_reasons = 0x1 | 0x40;  // idle (harmless) + hardware thermal
  s.host.iowait = 0.2;
  s.host.cpu_util = 0.85;
  s.host.disks = {{"sda", 0, 0, 0, 0, 0, 0, 0.2, 0}, {"nvme0n1", 1e9, 0, 1000, 0, 2, 0, 0.99, 8}};
  GpuMetrics lost;
  lost.index = 1;
  lost.lost = "fell off the bus";
  s.gpus.push_back(lost);
  auto flags = judgeHealth(s, t);
  EXPECT_TRUE(find(flags, "gpu0", "gpu_util")->ok);
  EXPECT_FALSE(find(flags, "gpu0", "gpu_memory")->ok);
  const HealthFlag* clocks = find(flags, "gpu0", "clocks");
  ASSERT_NE(clocks, nullptr);
  EXPECT_EQ(clocks->reason, "clocks held down: hw-thermal");
  const HealthFlag* io = find(flags, "host", "io_wait");
  EXPECT_FALSE(io->ok);
  EXPECT_NE(io->reason.find("nvme0n1 99 % busy"), std::string::npos) << io->reason;
  EXPECT_FALSE(find(flags, "host", "cpu")->ok);
  const HealthFlag* gone = find(flags, "gpu1", "present");
  ASSERT_NE(gone, nullptr);
  EXPECT_FALSE(gone->ok);
  EXPECT_EQ(find(flags, "gpu1", "gpu_util"), nullptr);  // nothing else judged on a lost GPU
  EXPECT_EQ(gpuBottleneck(s, s.gpus[1], t), "lost");
  EXPECT_EQ(throttleNames(0x4 | 0x80), "sw-power-cap, hw-power-brake");
}

TEST(Health, AllGreenAndNothingJudgedWithoutFigures) {
  Thresholds t = Thresholds::defaults();
  MonitorSample s = base();
  s.gpus[0].util_gpu = 0.99;
  for (const auto& f : judgeHealth(s, t)) EXPECT_TRUE(f.ok) << f.subject << " " << f.check;
  MonitorSample empty;
  empty.gpus.push_back(GpuMetrics{});  // util -1, no memory total
  EXPECT_TRUE(judgeHealth(empty, t).empty());
}

// Issue 20: XID events and uncorrected ECC errors were recorded but never flagged.
TEST(Health, XidAndUncorrectedEccAreRed) {
  Thresholds t = Thresholds::defaults();
  MonitorSample s = base();
  s.gpus[0].util_gpu = 0.99;
  s.gpus[0].xid_events = 2;
  s.gpus[0].ecc_uncorrected = 1;
  int xid = 0, ecc = 0;
  for (const auto& f : judgeHealth(s, t)) {
    if (f.check == "xid") {
      ++xid;
      EXPECT_FALSE(f.ok);
      EXPECT_NE(f.reason.find("79 the GPU fell off the bus"), std::string::npos) << f.reason;
    }
    if (f.check == "ecc") {
      ++ecc;
      EXPECT_FALSE(f.ok);
      EXPECT_NE(f.reason.find("drain the node"), std::string::npos) << f.reason;
    }
  }
  EXPECT_EQ(xid, 1);
  EXPECT_EQ(ecc, 1);
  s.gpus[0].xid_events = 0;
  s.gpus[0].ecc_uncorrected = 0;
  for (const auto& f : judgeHealth(s, t)) EXPECT_NE(f.check, "xid");
}

}  // namespace health_test
}  // namespace gpudoctor
