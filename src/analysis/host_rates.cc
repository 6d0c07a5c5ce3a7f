#include "analysis/host_rates.h"

#include <map>

namespace gpudoctor {
namespace {

uint64_t delta(uint64_t a, uint64_t b) { return b >= a ? b - a : 0; }

}  // namespace

HostMetrics hostRates(const HostCounters& prev, const HostCounters& cur) {
  HostMetrics m;
  double dt = static_cast<double>(cur.monotonic_ns - prev.monotonic_ns) / 1e9;
  if (dt <= 0) dt = 1e-9;
  std::map<std::string, const CpuTicks*> before;
  for (const auto& c : prev.cpus) before[c.name] = &c;
  for (const auto& c : cur.cpus) {
    auto it = before.find(c.name);
    if (it == before.end()) continue;
    const CpuTicks& p = *it->second;
    double total = static_cast<double>(delta(p.total(), c.total()));
    double idle = static_cast<double>(delta(p.idle, c.idle)), io = static_cast<double>(delta(p.iowait, c.iowait));
    double util = total > 0 ? (total - idle - io) / total : 0;
    if (c.name == "cpu") {
      m.cpu_util = util;
      m.iowait = total > 0 ? io / total : 0;
    } else {
      m.core_util.push_back(util);
    }
  }
  m.load1 = cur.load1;
  m.load5 = cur.load5;
  m.load15 = cur.load15;
  m.memory_total_bytes = cur.mem_total_bytes;
  m.memory_available_bytes = cur.mem_available_bytes;
  std::map<std::string, const DiskCounters*> dprev;
  for (const auto& d : prev.disks) dprev[d.name] = &d;
  for (const auto& d : cur.disks) {
    auto it = dprev.find(d.name);
    if (it == dprev.end()) continue;
    const DiskCounters& p = *it->second;
    DiskRate r;
    r.name = d.name;
    double reads = static_cast<double>(delta(p.reads, d.reads)),
           writes = static_cast<double>(delta(p.writes, d.writes));
    r.reads_per_s = reads / dt;
    r.writes_per_s = writes / dt;
    r.read_bytes_per_s = 512.0 * static_cast<double>(delta(p.read_sectors, d.read_sectors)) / dt;
    r.write_bytes_per_s = 512.0 * static_cast<double>(delta(p.write_sectors, d.write_sectors)) / dt;
    r.read_await_ms = reads > 0 ? static_cast<double>(delta(p.read_ms, d.read_ms)) / reads : 0;
    r.write_await_ms = writes > 0 ? static_cast<double>(delta(p.write_ms, d.write_ms)) / writes : 0;
    r.util = static_cast<double>(delta(p.io_ms, d.io_ms)) / (dt * 1000);
    if (r.util > 1) r.util = 1;  // ms counters and our clock are read a moment apart
    r.queue = static_cast<double>(delta(p.weighted_io_ms, d.weighted_io_ms)) / (dt * 1000);
    m.disks.push_back(r);
  }
  std::map<std::string, const NetCounters*> nprev;
  for (const auto& n : prev.nets) nprev[n.name] = &n;
  for (const auto& n : cur.nets) {
    auto it = nprev.find(n.name);
    if (it == nprev.end()) continue;
    m.nets.push_back({n.name, n.infiniband, static_cast<double>(delta(it->second->rx_bytes, n.rx_bytes)) / dt,
                      static_cast<double>(delta(it->second->tx_bytes, n.tx_bytes)) / dt});
  }
  auto psi = [&](int64_t a, int64_t b) {
    return a < 0 || b < 0 ? -1.0
                          : static_cast<double>(delta(static_cast<uint64_t>(a), static_cast<uint64_t>(b))) / (dt * 1e6);
  };
  m.psi_cpu_some = psi(prev.psi_cpu_some_us, cur.psi_cpu_some_us);
  m.psi_io_some = psi(prev.psi_io_some_us, cur.psi_io_some_us);
  m.psi_io_full = psi(prev.psi_io_full_us, cur.psi_io_full_us);
  m.psi_memory_some = psi(prev.psi_mem_some_us, cur.psi_mem_some_us);
  m.psi_memory_full = psi(prev.psi_mem_full_us, cur.psi_mem_full_us);
  std::map<int, const ProcCpu*> pprev;
  for (const auto& p : prev.procs) pprev[p.pid] = &p;
  for (const auto& p : cur.procs) {
    auto it = pprev.find(p.pid);
    if (it == pprev.end()) continue;
    m.procs.push_back(
        {p.pid, p.comm,
         static_cast<double>(delta(it->second->ticks, p.ticks)) / static_cast<double>(cur.ticks_per_second) / dt});
  }
  return m;
}

}  // namespace gpudoctor
