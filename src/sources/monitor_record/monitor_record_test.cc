// The recording: exact round trip, a torn last line, corruption, appending after a kill, and a
// monitor killed with SIGKILL while writing: every sample whose append returned is in the file.
#include "sources/monitor_record/monitor_record.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace gpudoctor {
namespace monitor_record_test {
namespace fs = std::filesystem;

MonitorSample sample(int64_t i) {
  MonitorSample s;
  s.unix_ns = 1'700'000'000'000'000'000 + i;
  s.interval_s = 1.0;
  s.hostname = "node-a";
  s.host.cpu_util = 0.25;
  s.host.iowait = 0.125;
  s.host.core_util = {0.5, 0};
  s.host.load1 = 1.5;
  s.host.memory_total_bytes = 1ull << 40;
  s.host.memory_available_bytes = 123456789;
  s.host.disks.push_back({"nvme0n1", 1e9, 2e6, 100, 10, 0.5, 1.25, 0.75, 2});
  s.host.nets.push_back({"mlx5_0/1", true, 3e9, 4e9});
  s.host.procs.push_back({4242, "python", 0.98});
  GpuMetrics g;
  g.index = 1;
  g.uuid = "GPU-1";
  g.name = "NVIDIA H200";
  g.pci_bus_id = "00000000:81:00.0";
  g.util_gpu = 0.97;
  g.memory_used_bytes = 100ull << 30;
  g.memory_total_bytes = 141ull << 30;
  g.power_w = 612.5;
  g.throttle_reasons = 0x4;
  g.pids = {4242};
  s.gpus.push_back(g);
  return s;
}

fs::path tmp(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("gpudoctor_rec_" + std::to_string(getpid()) + "_" + name);
  fs::remove(p);
  return p;
}

TEST(MonitorRecord, RoundTripIsExact) {
  MonitorSample s = sample(7);
  auto d = decodeMonitorSample(encodeMonitorSample(s));
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(encodeMonitorSample(d.value()), encodeMonitorSample(s));
  EXPECT_EQ(d.value().gpus[0].sm_clock_mhz, -1);  // not available stays not available
  EXPECT_EQ(d.value().host.disks[0].read_await_ms, 0.5);
}

TEST(MonitorRecord, WriteReadTornTailAndAppendAfterAKill) {
  auto p = tmp("torn");
  {
    MonitorRecordWriter w;
    ASSERT_TRUE(w.open(p.string()).ok());
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(w.append(sample(i)).ok());
  }
  std::ofstream(p, std::ios::app) << encodeMonitorSample(sample(3)).substr(0, 40);  // killed mid-write
  auto r = readMonitorRecording(p.string());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value().samples.size(), 3u);
  EXPECT_TRUE(r.value().torn_tail);
  {
    MonitorRecordWriter w;  // the monitor restarted on the same file
    ASSERT_TRUE(w.open(p.string()).ok());
    ASSERT_TRUE(w.append(sample(4)).ok());
  }
  r = readMonitorRecording(p.string());
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r.value().samples.size(), 4u);
  EXPECT_FALSE(r.value().torn_tail);
  EXPECT_EQ(r.value().samples[3].unix_ns, sample(4).unix_ns);
}

TEST(MonitorRecord, CorruptionAndForeignFilesAreErrorsNamingTheLine) {
  auto p = tmp("corrupt");
  {
    MonitorRecordWriter w;
    ASSERT_TRUE(w.open(p.string()).ok());
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(w.append(sample(i)).ok());
  }
  std::string text;
  {
    std::ifstream in(p);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  size_t second = text.find('\n', text.find('\n') + 1);  // end of sample line 2
  text[second - 5] = '#';
  std::ofstream(p, std::ios::trunc) << text;
  auto r = readMonitorRecording(p.string());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(p.string() + ":2:"), std::string::npos) << r.error().message;
  std::ofstream(p, std::ios::trunc) << "{\"traceEvents\":[]}\n";
  r = readMonitorRecording(p.string());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not a gpudoctor monitor recording"), std::string::npos);
  MonitorRecordWriter w;
  EXPECT_FALSE(w.open(p.string()).ok());  // never appends to someone else's file
  EXPECT_FALSE(w.open("/nonexistent/dir/rec.jsonl").ok());
  EXPECT_FALSE(readMonitorRecording("/nonexistent/rec.jsonl").ok());
}

// A writer killed with SIGKILL at a random moment: every append that returned is readable.
TEST(MonitorRecord, KillDashNineLosesAtMostTheSampleBeingWritten) {
  auto p = tmp("kill9");
  for (int round = 0; round < 3; ++round) {
    fs::remove(p);
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      MonitorRecordWriter w;
      if (!w.open(p.string(), 0.05).ok()) _exit(1);
      for (int64_t i = 0;; ++i) {
        if (!w.append(sample(i)).ok()) _exit(2);
        if (write(fds[1], &i, sizeof i) != sizeof i) _exit(3);  // "sample i is written"
      }
    }
    close(fds[1]);
    usleep(100000 + 50000 * round);
    kill(pid, SIGKILL);
    int st = 0;
    waitpid(pid, &st, 0);
    ASSERT_TRUE(WIFSIGNALED(st));
    int64_t last = -1, v;
    while (read(fds[0], &v, sizeof v) == sizeof v) last = v;
    close(fds[0]);
    ASSERT_GE(last, 0);
    auto r = readMonitorRecording(p.string());
    ASSERT_TRUE(r.ok()) << r.error().message;
    const auto& ss = r.value().samples;
    ASSERT_GE(static_cast<int64_t>(ss.size()), last + 1);  // nothing that was confirmed is lost
    EXPECT_LE(static_cast<int64_t>(ss.size()), last + 2);  // at most the one in flight beyond it
    for (size_t i = 0; i < ss.size(); ++i) ASSERT_EQ(ss[i].unix_ns, sample(static_cast<int64_t>(i)).unix_ns);
  }
  fs::remove(p);
}

}  // namespace monitor_record_test
}  // namespace gpudoctor
