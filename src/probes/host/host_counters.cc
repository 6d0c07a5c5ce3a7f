#include "probes/host/host_counters.h"

#include <unistd.h>

#include <charconv>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/clock.h"
#include "probes/sys_files.h"

namespace gpudoctor {
namespace {

namespace fs = std::filesystem;

// Splits into whitespace-separated fields.
std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> f;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    if (j > i) f.push_back(line.substr(i, j - i));
    i = j;
  }
  return f;
}

bool u64(std::string_view s, uint64_t& v) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

template <class F>
void eachLine(std::string_view text, F f) {
  size_t p = 0;
  while (p < text.size()) {
    size_t q = text.find('\n', p);
    if (q == std::string_view::npos) q = text.size();
    f(text.substr(p, q - p));
    p = q + 1;
  }
}

}  // namespace

std::vector<CpuTicks> parseProcStat(std::string_view text) {
  std::vector<CpuTicks> out;
  eachLine(text, [&](std::string_view line) {
    if (line.substr(0, 3) != "cpu") return;
    auto f = fields(line);
    if (f.size() < 9) return;
    CpuTicks c;
    c.name = std::string(f[0]);
    uint64_t* dst[] = {&c.user, &c.nice, &c.system, &c.idle, &c.iowait, &c.irq, &c.softirq, &c.steal};
    for (int i = 0; i < 8; ++i)
      if (!u64(f[1 + i], *dst[i])) return;
    out.push_back(std::move(c));
  });
  return out;
}

std::vector<DiskCounters> parseDiskstats(std::string_view text) {
  std::vector<DiskCounters> out;
  eachLine(text, [&](std::string_view line) {
    auto f = fields(line);
    if (f.size() < 14) return;
    DiskCounters d;
    d.name = std::string(f[2]);
    uint64_t merged = 0, in_flight = 0;
    uint64_t* dst[] = {&d.reads,         &merged,     &d.read_sectors, &d.read_ms, &d.writes,        &merged,
                       &d.write_sectors, &d.write_ms, &in_flight,      &d.io_ms,   &d.weighted_io_ms};
    for (int i = 0; i < 11; ++i)
      if (!u64(f[3 + i], *dst[i])) return;
    out.push_back(std::move(d));
  });
  return out;
}

std::vector<NetCounters> parseNetDev(std::string_view text) {
  std::vector<NetCounters> out;
  eachLine(text, [&](std::string_view line) {
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) return;  // the two header lines
    auto name = fields(line.substr(0, colon));
    auto f = fields(line.substr(colon + 1));
    if (name.size() != 1 || f.size() < 9) return;
    NetCounters n;
    n.name = std::string(name[0]);
    if (!u64(f[0], n.rx_bytes) || !u64(f[8], n.tx_bytes)) return;
    out.push_back(std::move(n));
  });
  return out;
}

void parsePressure(std::string_view text, int64_t& some_us, int64_t& full_us) {
  some_us = full_us = -1;
  eachLine(text, [&](std::string_view line) {
    auto f = fields(line);
    if (f.empty()) return;
    for (auto x : f)
      if (x.substr(0, 6) == "total=") {
        uint64_t v = 0;
        if (!u64(x.substr(6), v)) return;
        (f[0] == "some" ? some_us : full_us) = static_cast<int64_t>(v);
      }
  });
}

bool parseProcPidStat(std::string_view text, ProcCpu& out) {
  size_t open = text.find('('), close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return false;
  out.comm = std::string(text.substr(open + 1, close - open - 1));
  auto f = fields(text.substr(close + 1));
  // After the name: state(0) ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime(11) stime(12)
  uint64_t ut = 0, st = 0;
  if (f.size() < 13 || !u64(f[11], ut) || !u64(f[12], st)) return false;
  out.ticks = ut + st;
  return true;
}

Result<HostCounters> readHostCounters(const std::string& root, const std::vector<int>& pids) {
  HostCounters h;
  h.monotonic_ns = monotonicNs();
  long tck = sysconf(_SC_CLK_TCK);
  h.ticks_per_second = tck > 0 ? tck : 100;
  std::string text;
  std::string stat_path = root + "/proc/stat";
  if (!readSysFile(stat_path, text)) return Error{stat_path + ": cannot read (is this a Linux host with /proc?)"};
  h.cpus = parseProcStat(text);
  if (h.cpus.empty() || h.cpus[0].name != "cpu") return Error{stat_path + ": no \"cpu\" line"};
  if (readSysFile(root + "/proc/loadavg", text)) {
    std::istringstream ss(text);
    ss >> h.load1 >> h.load5 >> h.load15;
  }
  if (readSysFile(root + "/proc/meminfo", text))
    eachLine(text, [&](std::string_view line) {
      auto f = fields(line);
      uint64_t kb = 0;
      if (f.size() < 2 || !u64(f[1], kb)) return;
      if (f[0] == "MemTotal:") h.mem_total_bytes = kb * 1024;
      if (f[0] == "MemAvailable:") h.mem_available_bytes = kb * 1024;
    });
  if (readSysFile(root + "/proc/diskstats", text)) {
    // Whole disks only (iostat's default view), when /sys/block says which ones they are;
    // loop and ram devices never.
    std::error_code ec;
    bool have_sys_block = fs::is_directory(root + "/sys/block", ec);
    for (auto& d : parseDiskstats(text)) {
      if (d.name.rfind("loop", 0) == 0 || d.name.rfind("ram", 0) == 0) continue;
      if (have_sys_block && !fs::exists(root + "/sys/block/" + d.name, ec)) continue;
      h.disks.push_back(std::move(d));
    }
  }
  if (readSysFile(root + "/proc/net/dev", text))
    for (auto& n : parseNetDev(text))
      if (n.name != "lo") h.nets.push_back(std::move(n));
  // InfiniBand port counters count 4-byte words (port_rcv_data / port_xmit_data).
  std::error_code ec;
  for (const auto& dev : fs::directory_iterator(root + "/sys/class/infiniband", ec)) {
    std::error_code ec2;
    for (const auto& port : fs::directory_iterator(dev.path() / "ports", ec2)) {
      uint64_t r = 0, t = 0;
      if (!u64(readSysLine(port.path() / "counters/port_rcv_data"), r) ||
          !u64(readSysLine(port.path() / "counters/port_xmit_data"), t))
        continue;
      h.nets.push_back({dev.path().filename().string() + "/" + port.path().filename().string(), true, 4 * r, 4 * t});
    }
  }
  int64_t unused = 0;
  if (readSysFile(root + "/proc/pressure/cpu", text)) parsePressure(text, h.psi_cpu_some_us, unused);
  if (readSysFile(root + "/proc/pressure/io", text)) parsePressure(text, h.psi_io_some_us, h.psi_io_full_us);
  if (readSysFile(root + "/proc/pressure/memory", text)) parsePressure(text, h.psi_mem_some_us, h.psi_mem_full_us);
  for (int pid : pids) {
    ProcCpu p;
    p.pid = pid;
    if (readSysFile(root + "/proc/" + std::to_string(pid) + "/stat", text) && parseProcPidStat(text, p))
      h.procs.push_back(p);
  }
  return h;
}

}  // namespace gpudoctor
