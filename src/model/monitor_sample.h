// One moment of the live monitor: per GPU and host metrics as rates and levels over the last
// interval. Plain data shared by the probes that fill it, the health rules that judge it, the
// renderers (terminal, Prometheus) and the recording. A double of -1 means "not available here".
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gpudoctor {

struct GpuMetrics {
  int index = 0;
  std::string uuid, name, pci_bus_id;
  double util_gpu = -1, util_memory = -1;  // ratios 0-1 over NVML's sample period
  uint64_t memory_used_bytes = 0, memory_total_bytes = 0;
  double sm_clock_mhz = -1, memory_clock_mhz = -1, power_w = -1, power_limit_w = -1, temperature_c = -1;
  double energy_j = -1;  // since the driver loaded
  double pcie_rx_bytes_per_s = -1, pcie_tx_bytes_per_s = -1;
  double nvlink_rx_bytes_per_s = -1, nvlink_tx_bytes_per_s = -1;
  uint64_t throttle_reasons = 0;  // NVML clocks-event reason bits
  int64_t xid_events = 0;         // XID events seen since the monitor started
  int64_t ecc_uncorrected = -1;   // volatile uncorrected ECC errors
  std::vector<int> pids;          // compute processes
  std::string lost;               // why NVML no longer reaches this GPU; empty while it does
};

struct DiskRate {
  std::string name;
  double read_bytes_per_s = 0, write_bytes_per_s = 0, reads_per_s = 0, writes_per_s = 0;
  double read_await_ms = 0, write_await_ms = 0;  // mean time per completed request (iostat r_await / w_await)
  double util = 0;                               // share of time with I/O in flight (%util / 100)
  double queue = 0;                              // mean requests in flight (aqu-sz)
};

struct NetRate {
  std::string name;
  bool infiniband = false;
  double rx_bytes_per_s = 0, tx_bytes_per_s = 0;
};

struct ProcRate {
  int pid = 0;
  std::string comm;
  double cpu_cores = 0;  // CPU seconds per second (1.0 = one core busy)
};

struct HostMetrics {
  double cpu_util = -1, iowait = -1;  // ratios of all CPU time
  std::vector<double> core_util;      // per core
  double load1 = 0, load5 = 0, load15 = 0;
  uint64_t memory_total_bytes = 0, memory_available_bytes = 0;
  std::vector<DiskRate> disks;
  std::vector<NetRate> nets;
  // Pressure stall shares of the interval (PSI "some"/"full"), -1 without PSI.
  double psi_cpu_some = -1, psi_io_some = -1, psi_io_full = -1, psi_memory_some = -1, psi_memory_full = -1;
  std::vector<ProcRate> procs;  // processes using the GPUs
};

struct MonitorSample {
  int64_t unix_ns = 0;    // wall clock at the end of the interval
  double interval_s = 0;  // length of the interval the rates cover
  std::string hostname;
  HostMetrics host;
  std::vector<GpuMetrics> gpus;
  std::string gpu_status;  // why there are no GPU figures ("NVML not found: host-only"), else empty
};

}  // namespace gpudoctor
