// Host counters as /proc and /sys give them (CPU jiffies, disks, network and InfiniBand bytes,
// pressure stalls, per-process CPU time): plain data that probes/host fills and
// analysis/host_rates turns into rates.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gpudoctor {

// One line of /proc/stat ("cpu" or "cpuN"), in clock ticks.
struct CpuTicks {
  std::string name;  // "cpu" (all) or "cpu0", ...
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  // Everything but guest time, which user already contains.
  uint64_t total() const { return user + nice + system + idle + iowait + irq + softirq + steal; }
};

// One block device of /proc/diskstats (whole disks only where /sys/block says which they are).
struct DiskCounters {
  std::string name;
  uint64_t reads = 0, read_sectors = 0, read_ms = 0;
  uint64_t writes = 0, write_sectors = 0, write_ms = 0;
  uint64_t io_ms = 0, weighted_io_ms = 0;  // time with I/O in flight; its integral over queue depth
};

// Bytes through one network interface or InfiniBand port.
struct NetCounters {
  std::string name;  // "eth0" or "mlx5_0/1"
  bool infiniband = false;
  uint64_t rx_bytes = 0, tx_bytes = 0;
};

// CPU time of one process (utime + stime, clock ticks).
struct ProcCpu {
  int pid = 0;
  std::string comm;
  uint64_t ticks = 0;
};

struct HostCounters {
  int64_t monotonic_ns = 0;    // when read (CLOCK_MONOTONIC): rates divide by its difference
  std::vector<CpuTicks> cpus;  // [0] is the "cpu" total line
  double load1 = 0, load5 = 0, load15 = 0;
  uint64_t mem_total_bytes = 0, mem_available_bytes = 0;
  std::vector<DiskCounters> disks;
  std::vector<NetCounters> nets;
  // Pressure stall information (microseconds, "some" line totals); -1 where the kernel has no PSI.
  int64_t psi_cpu_some_us = -1, psi_io_some_us = -1, psi_io_full_us = -1, psi_mem_some_us = -1, psi_mem_full_us = -1;
  std::vector<ProcCpu> procs;
  long ticks_per_second = 100;
};

}  // namespace gpudoctor
