// `gpudoctor monitor` as a user runs it: against a fake NVML and a fake /proc tree (exact figures
// and red flags), the Prometheus endpoint scraped over HTTP, kill -9 while recording, bad input.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli/cli_test_util.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;

using namespace gpudoctor::testing;  // NOLINT: the shared CLI test helpers

// A minimal host: 2 cores, heavy IO wait between the readings the monitor takes is not scriptable
// with a static tree, so rates are 0 and the GPU figures carry the test.
fs::path fakeRoot() {
  fs::path r = scratch() / "root";
  fs::create_directories(r / "proc");
  std::ofstream(r / "proc/stat")
      << "cpu  100 0 100 800 0 0 0 0 0 0\ncpu0 50 0 50 400 0 0 0 0 0 0\ncpu1 50 0 50 400 0 0 0 0 0 0\n";
  std::ofstream(r / "proc/meminfo") << "MemTotal: 1024 kB\nMemAvailable: 512 kB\n";
  std::ofstream(r / "proc/loadavg") << "0.50 0.40 0.30 1/100 1\n";
  return r;
}

std::string fakeNvmlEnv() { return "GPUDOCTOR_FAKE_NVML=" + src("testdata/fake_nvml/monitor_2gpu.txt"); }

TEST(CliMonitor, OnceJsonAgainstFakeNvmlAndRoot) {
  auto r = run(
      "monitor --once --json - --interval 0.05 --root " + fakeRoot().string() + " --nvml-library " GPUDOCTOR_FAKE_NVML,
      fakeNvmlEnv());
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  // Named keys in base units (issue 20: they were the recording's "g", "h" and bare arrays).
  const auto& g = j["sample"]["gpus"];
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0]["util"], 0.97);
  EXPECT_EQ(g[0]["memory_used_bytes"], 100000ull << 20);
  EXPECT_EQ(g[0]["power_w"], 612.345);
  EXPECT_EQ(g[0]["xid_events"], 1);
  EXPECT_EQ(j["sample"]["host"]["cpu_util"], 0.0);  // a static tree: no CPU time passed
  EXPECT_TRUE(j["sample"]["host"]["load"].contains("15m"));
  for (const auto& d : j["sample"]["host"]["disks"]) EXPECT_TRUE(d.is_object() && d.contains("read_bytes_per_s")) << d;
  EXPECT_FALSE(j["sample"].contains("g"));
  EXPECT_FALSE(j["sample"].contains("h"));
  int red = 0;
  bool clocks = false, noproc = false;
  for (const auto& f : j["health"]) {
    red += !f["ok"].get<bool>();
    clocks |= f["subject"] == "gpu0" && f["check"] == "clocks" &&
              f["reason"].get<std::string>().find("sw-power-cap") != std::string::npos;
    // GPU 1 lists no process but holds 136.7 GiB: one account of it, in both flags (was: "no process is
    // using this GPU" beside "close to out of memory: smaller micro-batch").
    if (f["subject"] == "gpu1" && (f["check"] == "gpu_util" || f["check"] == "gpu_memory"))
      noproc |=
          f["reason"].get<std::string>().find("no process NVML can see") != std::string::npos ||
          f["reason"].get<std::string>().find("NVML lists no process on this GPU, yet 136.7 GiB") != std::string::npos;
    if (f["subject"] == "gpu1" && f["check"] == "gpu_memory") {
      EXPECT_EQ(f["reason"].get<std::string>().find("micro-batch,"), std::string::npos) << f["reason"];
    }
  }
  EXPECT_TRUE(clocks);
  EXPECT_TRUE(noproc);
  bool xid = false;
  for (const auto& f : j["health"]) xid |= f["subject"] == "gpu0" && f["check"] == "xid" && !f["ok"].get<bool>();
  EXPECT_TRUE(xid);  // the fake GPU 0 has had one XID event
  // gpu0 clocks and xid; gpu1 util, memory (140000 of 143771 MiB = 97.4 %) and its 2 uncorrected ECC errors
  EXPECT_EQ(red, 5);
}

TEST(CliMonitor, HostOnlyWithoutNvmlSaysSoOnce) {
  auto r = run("monitor --once --interval 0.05 --nvml-library /nonexistent/libnvidia-ml.so.1");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("host-only"), std::string::npos);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  EXPECT_NE(r.out.find("host: CPU"), std::string::npos);
}

TEST(CliMonitor, PrometheusEndpointServesTheExpositionFormat) {
  int port = freePort();
  pid_t pid = fork();
  if (pid == 0) {
    setenv("GPUDOCTOR_FAKE_NVML", src("testdata/fake_nvml/monitor_2gpu.txt").c_str(), 1);
    std::string p = std::to_string(port);
    execl(GPUDOCTOR_BIN, GPUDOCTOR_BIN, "monitor", "-q", "--interval", "0.05", "--duration", "5", "--prometheus",
          p.c_str(), "--nvml-library", GPUDOCTOR_FAKE_NVML, static_cast<char*>(nullptr));
    _exit(127);
  }
  httplib::Client c("127.0.0.1", port);
  std::string body;
  for (int i = 0; i < 100; ++i) {
    auto res = c.Get("/metrics");
    if (res && res->status == 200 && res->body.find("gpudoctor_gpu_utilization_ratio") != std::string::npos) {
      body = res->body;
      EXPECT_NE(res->get_header_value("Content-Type").find("version=0.0.4"), std::string::npos);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // A second exporter on the same port is refused, not a silent sharer of the scrapes.
  auto second = run("monitor --no-gpu --once --prometheus " + std::to_string(port));
  EXPECT_EQ(second.rc, 3) << second.err;
  EXPECT_NE(second.err.find("cannot listen"), std::string::npos) << second.err;
  kill(pid, SIGTERM);
  int st = 0;
  waitpid(pid, &st, 0);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  ASSERT_FALSE(body.empty());
  EXPECT_NE(body.find("# TYPE gpudoctor_gpu_utilization_ratio gauge"), std::string::npos);
  EXPECT_NE(
      body.find("gpudoctor_gpu_utilization_ratio{gpu=\"0\",UUID=\"GPU-00000000-aaaa\",pci_bus_id=\"00000000:03:00.0\","
                "device=\"nvidia0\",modelName=\"NVIDIA H200\""),
      std::string::npos)
      << body.substr(0, 2000);
  EXPECT_NE(body.find("# TYPE gpudoctor_gpu_energy_joules_total counter"), std::string::npos);
  EXPECT_NE(body.find("gpudoctor_health_ok{"), std::string::npos);
  // Every sample line: name{labels} value, the value a number.
  std::istringstream in(body);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    size_t sp = line.rfind(' ');
    ASSERT_NE(sp, std::string::npos) << line;
    EXPECT_NO_THROW(std::stod(line.substr(sp + 1))) << line;
    EXPECT_EQ(line.rfind("gpudoctor_", 0), 0u) << line;
  }
}

TEST(CliMonitor, PortInUseIsOneClearError) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  listen(s, 1);
  socklen_t n = sizeof a;
  getsockname(s, reinterpret_cast<sockaddr*>(&a), &n);
  auto r = run("monitor --no-gpu --once --prometheus " + std::to_string(ntohs(a.sin_port)));
  close(s);
  EXPECT_EQ(r.rc, 3);
  EXPECT_NE(r.err.find("cannot listen"), std::string::npos) << r.err;
}

TEST(CliMonitor, KillDashNineWhileRecordingThenReport) {
  fs::path rec = scratch() / "rec.jsonl";
  fs::remove(rec);
  pid_t pid = fork();
  if (pid == 0) {
    setenv("GPUDOCTOR_FAKE_NVML", src("testdata/fake_nvml/monitor_2gpu.txt").c_str(), 1);
    execl(GPUDOCTOR_BIN, GPUDOCTOR_BIN, "monitor", "-q", "--interval", "0.02", "--record", rec.c_str(),
          "--nvml-library", GPUDOCTOR_FAKE_NVML, static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  auto r = run("monitor report --json - " + rec.string());
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_GE(j["samples"].get<int>(), 5);
  ASSERT_EQ(j["gpus"].size(), 2u);
  EXPECT_EQ(j["gpus"][0]["dominant"], "compute");  // 97 % busy
  EXPECT_EQ(j["gpus"][1]["dominant"], "lost");     // fell off the bus after 2 readings
  auto t = run("monitor report " + rec.string());
  EXPECT_EQ(t.rc, 0);
  EXPECT_NE(t.out.find("dominant: compute"), std::string::npos) << t.out;
}

TEST(CliMonitor, BadInput) {
  EXPECT_EQ(run("monitor --interval 0").rc, 2);
  EXPECT_EQ(run("monitor --prometheus notaport --no-gpu").rc, 2);
  EXPECT_EQ(run("monitor --bogus").rc, 2);
  auto r = run("monitor --no-gpu --once --record /nonexistent/dir/rec.jsonl");
  EXPECT_EQ(r.rc, 3);
  EXPECT_NE(r.err.find("/nonexistent/dir/rec.jsonl"), std::string::npos);
  EXPECT_EQ(run("monitor --no-gpu --once --root /nonexistent").rc, 3);
  fs::path bad = scratch() / "torn.jsonl";
  std::ofstream(bad) << "{\"format\":\"gpudoctor-monitor-record\",\"version\":1}\n{\"t_ns\":1,";
  r = run("monitor report " + bad.string());
  EXPECT_EQ(r.rc, 3);  // nothing but a torn line: no complete sample
  EXPECT_NE(r.err.find("no complete sample"), std::string::npos) << r.err;
  EXPECT_EQ(run("monitor report " + src("README.md")).rc, 3);
  EXPECT_EQ(run("monitor report /nonexistent.jsonl").rc, 3);
  // A directory is one line naming it (was: a raw C++ stream error); the gzipped recording shipped
  // in docs/ reads as it is (was: "no header line").
  auto dir = run("monitor report " + scratch().string());
  EXPECT_EQ(dir.rc, 3);
  EXPECT_NE(dir.err.find("a directory; give the recording file"), std::string::npos) << dir.err;
  EXPECT_EQ(dir.err.find("basic_filebuf"), std::string::npos) << dir.err;
  auto gz = run("monitor report " + src("docs/monitor_h200/monitor.jsonl.gz"));
  EXPECT_EQ(gz.rc, 0) << gz.err;
}

// The figures of one row of the dmon view (time, gpu, then the columns) or of the CSV.
std::vector<std::string> fields(const std::string& line, char sep) {
  std::vector<std::string> v;
  std::istringstream in(line);
  std::string f;
  if (sep == ' ') {
    while (in >> f) v.push_back(f);
  } else {
    while (std::getline(in, f, sep)) v.push_back(f);
  }
  return v;
}

// nvidia-smi dmon's layout (issue 42: the columns were not dmon's and NVML's memory-bandwidth
// utilization, collected, was shown nowhere): --dmon's two-line header and one row per GPU per
// sample with sm = GPU util 97 and mem = memory-bandwidth util 61 for the fake GPU 0, memory in GiB;
// a red flag once when it turns red, as a # line.
TEST(CliMonitor, DmonViewHasDmonColumnsAndMemoryBandwidth) {
  auto r = run("monitor --dmon --duration 0.2 --interval 0.05 --root " + fakeRoot().string() +
                   " --nvml-library " GPUDOCTOR_FAKE_NVML,
               fakeNvmlEnv());
  ASSERT_EQ(r.rc, 0) << r.err;
  std::istringstream in(r.out);
  std::string names, units, row;
  std::getline(in, names);
  std::getline(in, units);
  EXPECT_EQ(fields(names, ' '), (std::vector<std::string>{"#", "time", "gpu", "pwr", "gtemp", "sm", "mem", "fb", "fb%",
                                                          "pclk", "mclk", "rxpci", "txpci", "rxnvl", "txnvl", "xid"}));
  EXPECT_EQ(fields(units, ' ')[7], "GiB") << units;
  std::getline(in, row);
  auto g0 = fields(row, ' ');
  ASSERT_EQ(g0.size(), 15u) << row;
  EXPECT_EQ(g0[1], "0");
  EXPECT_EQ(g0[4], "97");    // sm: GPU utilization
  EXPECT_EQ(g0[5], "61");    // mem: memory-bandwidth utilization
  EXPECT_EQ(g0[6], "97.7");  // fb: 100000 MiB in GiB
  size_t clocks = 0;
  for (size_t at = 0; (at = r.out.find("RED gpu0 clocks", at)) != std::string::npos; ++at) ++clocks;
  EXPECT_EQ(clocks, 1u) << r.out;  // said once, not on every sample
  // The full view shows the same rates by dmon's names.
  auto full =
      run("monitor --once --interval 0.05 --root " + fakeRoot().string() + " --nvml-library " GPUDOCTOR_FAKE_NVML,
          fakeNvmlEnv());
  ASSERT_EQ(full.rc, 0) << full.err;
  EXPECT_NE(full.out.find("gpu     sm   mem        fb GiB   fb%"), std::string::npos) << full.out;
  EXPECT_NE(full.out.find("0      97%   61%    97.7/140.4   70%"), std::string::npos) << full.out;
}

// --csv FILE|-: the dmon columns as CSV, a header of names with units, one row per GPU per sample;
// stdout takes one document at most, and --dmon needs stdout.
TEST(CliMonitor, CsvHasTheDmonColumns) {
  auto csv = scratch() / "m.csv";
  auto r = run("monitor --csv " + csv.string() + " -q --duration 0.12 --interval 0.05 --root " + fakeRoot().string() +
                   " --nvml-library " GPUDOCTOR_FAKE_NVML,
               fakeNvmlEnv());
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "");  // -q: no view
  std::istringstream in(slurp(csv));
  std::string header, row;
  std::getline(in, header);
  auto names = fields(header, ',');
  ASSERT_GE(names.size(), 7u) << header;
  EXPECT_EQ(names[0], "time");
  EXPECT_EQ(names[5], "mem_bw_util_pct");
  EXPECT_EQ(names[6], "fb_used_gib");
  std::getline(in, row);
  auto g0 = fields(row, ',');
  ASSERT_EQ(g0.size(), names.size()) << row;
  EXPECT_EQ(g0[5], "61");
  EXPECT_EQ(g0[6], "97.7");
  auto out = run(
      "monitor --csv - --once --interval 0.05 --root " + fakeRoot().string() + " --nvml-library " GPUDOCTOR_FAKE_NVML,
      fakeNvmlEnv());
  ASSERT_EQ(out.rc, 0) << out.err;
  EXPECT_EQ(out.out.rfind("time,gpu,", 0), 0u) << out.out;
  EXPECT_EQ(lines(out.out), 3);  // the header and 2 GPUs: no view
  EXPECT_EQ(run("monitor --csv - --json - --no-gpu").rc, 2);
  EXPECT_EQ(run("monitor --dmon --csv - --no-gpu").rc, 2);
  EXPECT_EQ(run("monitor --dmon -q --record " + (scratch() / "r.jsonl").string() + " --no-gpu").rc, 2);
}

// Memory in one unit: the monitor's view is in GiB, and so is the red flag's reason (it said "146.8
// GB" of the same 140000 MiB).
TEST(CliMonitor, MemoryInGiBEverywhere) {
  auto r = run("monitor --once --interval 0.05 --root " + fakeRoot().string() + " --nvml-library " GPUDOCTOR_FAKE_NVML,
               fakeNvmlEnv());
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("136.7 GiB of its memory"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(" GB "), std::string::npos) << r.out;
}

}  // namespace
