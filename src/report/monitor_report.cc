#include "report/monitor_report.h"

#include <cmath>
#include <ctime>
#include <iterator>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace gpudoctor {
namespace {

std::string pct(double r) { return r < 0 ? "  n/a" : fmt::format("{:4.0f}%", 100 * r); }
std::string gbs(double b) { return b < 0 ? "n/a" : fmt::format("{:.2f}", b / 1e9); }
std::string gib(uint64_t b) { return fmt::format("{:.1f}", static_cast<double>(b) / (1ull << 30)); }

// Prometheus label values escape backslash, quote and newline.
std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '\\' || c == '"') o += '\\';
    if (c == '\n') {
      o += "\\n";
      continue;
    }
    o += c;
  }
  return o;
}

// Numbers as Prometheus writes them: shortest round-trip form.
std::string num(double v) {
  if (std::isnan(v)) return "NaN";
  return fmt::format("{}", v);
}

}  // namespace

std::string renderMonitorView(const MonitorSample& s, const std::vector<HealthFlag>& flags) {
  std::string o = fmt::format("gpudoctor monitor  {}  interval {:.1f} s\n", s.hostname, s.interval_s);
  if (!s.gpu_status.empty()) o += "GPUs: " + s.gpu_status + "\n";
  if (!s.gpus.empty()) {
    // nvidia-smi dmon's names: sm the GPU utilization, mem the memory-bandwidth utilization, fb the
    // memory in use (GiB, and its share), pwr, gtemp, pclk the SM clock.
    o += fmt::format("{:<4} {:>5} {:>5} {:>13} {:>5} {:>5} {:>5} {:>5} {:>9} {:>9} {:>4}  {}\n", "gpu", "sm", "mem",
                     "fb GiB", "fb%", "pwr", "gtemp", "pclk", "PCIe GB/s", "NVL GB/s", "xid", "name");
    for (const auto& g : s.gpus) {
      if (!g.lost.empty()) {
        o += fmt::format("{:<4} LOST: {}\n", g.index, g.lost);
        continue;
      }
      double mem = g.memory_total_bytes
                       ? static_cast<double>(g.memory_used_bytes) / static_cast<double>(g.memory_total_bytes)
                       : -1;
      double pcie = g.pcie_rx_bytes_per_s < 0 ? -1 : g.pcie_rx_bytes_per_s + g.pcie_tx_bytes_per_s;
      double nvl = g.nvlink_rx_bytes_per_s < 0 ? -1 : g.nvlink_rx_bytes_per_s + g.nvlink_tx_bytes_per_s;
      o += fmt::format("{:<4} {:>5} {:>5} {:>13} {:>5} {:>5} {:>5} {:>5} {:>9} {:>9} {:>4}  {}\n", g.index,
                       pct(g.util_gpu), pct(g.util_memory), gib(g.memory_used_bytes) + "/" + gib(g.memory_total_bytes),
                       pct(mem), g.power_w < 0 ? "n/a" : fmt::format("{:.0f}W", g.power_w),
                       g.temperature_c < 0 ? "n/a" : fmt::format("{:.0f}C", g.temperature_c),
                       g.sm_clock_mhz < 0 ? "n/a" : fmt::format("{:.0f}", g.sm_clock_mhz), gbs(pcie), gbs(nvl),
                       g.xid_events, g.name.substr(0, 15));
    }
  }
  const HostMetrics& h = s.host;
  double mem_used = h.memory_total_bytes
                        ? 1 - static_cast<double>(h.memory_available_bytes) / static_cast<double>(h.memory_total_bytes)
                        : -1;
  o += fmt::format("host: CPU {} (iowait {})  load {:.2f}  memory {} of {} GiB", pct(h.cpu_util), pct(h.iowait),
                   h.load1, pct(mem_used), gib(h.memory_total_bytes));
  if (h.psi_io_some >= 0) o += fmt::format("  PSI io {}", pct(h.psi_io_some));
  o += "\n";
  for (const auto& d : h.disks)
    if (d.reads_per_s + d.writes_per_s > 0)
      o += fmt::format("  disk {:<10} read {:>8.1f} MB/s  write {:>8.1f} MB/s  r_await {:>6.2f} ms  util {}\n", d.name,
                       d.read_bytes_per_s / 1e6, d.write_bytes_per_s / 1e6, d.read_await_ms, pct(d.util));
  for (const auto& n : h.nets)
    if (n.rx_bytes_per_s + n.tx_bytes_per_s > 0)
      o += fmt::format("  {} {:<10} rx {:>8.3f} GB/s  tx {:>8.3f} GB/s\n", n.infiniband ? "ib  " : "net ", n.name,
                       n.rx_bytes_per_s / 1e9, n.tx_bytes_per_s / 1e9);
  for (const auto& p : h.procs)
    o += fmt::format("  pid {:<8} {:<16} CPU {:.2f} cores\n", p.pid, p.comm.substr(0, 16), p.cpu_cores);
  int red = 0;
  for (const auto& f : flags) red += !f.ok;
  o += red             ? fmt::format("health: {} red flag(s)\n", red)
       : flags.empty() ? "health: nothing to judge (no GPU or host figures in this sample)\n"
                       : fmt::format("health: all {} checks pass\n", flags.size());
  for (const auto& f : flags)
    if (!f.ok) o += fmt::format("  RED  {:<5} {:<10} {}\n", f.subject, f.check, f.reason);
  return o;
}

namespace {

// One dmon or CSV figure: the value in `fmt`, or `missing` where the monitor could not read it.
std::string fig(double v, const char* missing, double scale = 1, int decimals = 0) {
  return v < 0 ? missing : fmt::format("{:.{}f}", v * scale, decimals);
}

// The wall clock of a sample: "HH:MM:SS" local (dmon -o T), or ISO 8601 UTC for CSV.
std::string clock(int64_t unix_ns, bool iso) {
  std::time_t t = static_cast<std::time_t>(unix_ns / 1000000000);
  std::tm tm{};
  if (iso) {
    gmtime_r(&t, &tm);
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                       tm.tm_min, tm.tm_sec);
  }
  localtime_r(&t, &tm);
  return fmt::format("{:02}:{:02}:{:02}", tm.tm_hour, tm.tm_min, tm.tm_sec);
}

// The columns of the dmon view and the CSV, in order: sm the GPU utilization and mem the
// memory-bandwidth utilization (NVML's two utilization rates, as dmon names them), fb the memory in
// use (GiB) and its share, power, temperature, SM and memory clocks, PCIe and NVLink traffic (GB/s).
std::vector<std::string> dmonFigures(const GpuMetrics& g, const char* missing, int gbs_decimals) {
  double fb_share =
      g.memory_total_bytes ? static_cast<double>(g.memory_used_bytes) / static_cast<double>(g.memory_total_bytes) : -1;
  double fb = g.memory_total_bytes ? static_cast<double>(g.memory_used_bytes) : -1;
  return {fig(g.power_w, missing),
          fig(g.temperature_c, missing),
          fig(g.util_gpu, missing, 100),
          fig(g.util_memory, missing, 100),
          fig(fb, missing, 1.0 / (1ull << 30), 1),
          fig(fb_share, missing, 100),
          fig(g.sm_clock_mhz, missing),
          fig(g.memory_clock_mhz, missing),
          fig(g.pcie_rx_bytes_per_s, missing, 1e-9, gbs_decimals),
          fig(g.pcie_tx_bytes_per_s, missing, 1e-9, gbs_decimals),
          fig(g.nvlink_rx_bytes_per_s, missing, 1e-9, gbs_decimals),
          fig(g.nvlink_tx_bytes_per_s, missing, 1e-9, gbs_decimals),
          std::to_string(g.xid_events)};
}

constexpr const char* kDmonNames[] = {"pwr",  "gtemp", "sm",    "mem",   "fb",    "fb%", "pclk",
                                      "mclk", "rxpci", "txpci", "rxnvl", "txnvl", "xid"};
constexpr const char* kDmonUnits[] = {"W",   "C",    "%",    "%",    "GiB",  "%", "MHz",
                                      "MHz", "GB/s", "GB/s", "GB/s", "GB/s", "n"};
constexpr const char* kCsvNames[] = {"power_w",          "gpu_temp_c",       "sm_util_pct",        "mem_bw_util_pct",
                                     "fb_used_gib",      "fb_used_pct",      "sm_clock_mhz",       "mem_clock_mhz",
                                     "pcie_rx_gb_per_s", "pcie_tx_gb_per_s", "nvlink_rx_gb_per_s", "nvlink_tx_gb_per_s",
                                     "xid_events"};

}  // namespace

std::string renderMonitorDmonHeader() {
  std::string names = fmt::format("# {:<8} {:>3}", "time", "gpu"),
              units = fmt::format("# {:<8} {:>3}", "HH:MM:SS", "Idx");
  for (size_t i = 0; i < std::size(kDmonNames); ++i) {
    names += fmt::format(" {:>5}", kDmonNames[i]);
    units += fmt::format(" {:>5}", kDmonUnits[i]);
  }
  return names + "\n" + units + "\n";
}

std::string renderMonitorDmon(const MonitorSample& s, const std::vector<HealthFlag>& flags) {
  std::string o, t = clock(s.unix_ns, false);
  if (s.gpus.empty()) o += fmt::format("# {} no GPU: {}\n", t, s.gpu_status.empty() ? "none found" : s.gpu_status);
  for (const auto& g : s.gpus) {
    o += fmt::format("  {:<8} {:>3}", t, g.index);
    if (!g.lost.empty()) {
      o += " LOST: " + g.lost + "\n";
      continue;
    }
    for (const auto& f : dmonFigures(g, "-", 1)) o += fmt::format(" {:>5}", f);
    o += "\n";
  }
  for (const auto& f : flags)
    if (!f.ok) o += fmt::format("# {} RED {} {}: {}\n", t, f.subject, f.check, f.reason);
  return o;
}

std::string renderMonitorCsvHeader() {
  std::string o = "time,gpu";
  for (const char* n : kCsvNames) o += std::string(",") + n;
  return o + "\n";
}

std::string renderMonitorCsv(const MonitorSample& s) {
  std::string o, t = clock(s.unix_ns, true);
  for (const auto& g : s.gpus) {
    if (!g.lost.empty()) continue;  // a GPU NVML lost has no figures: no row
    o += fmt::format("{},{}", t, g.index);
    for (const auto& f : dmonFigures(g, "", 2)) o += "," + f;
    o += "\n";
  }
  return o;
}

namespace {
// A figure the monitor could not read (negative) as null.
nlohmann::ordered_json orNull(double v) { return v < 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(v); }

nlohmann::ordered_json sampleObject(const MonitorSample& s) {
  using J = nlohmann::ordered_json;
  const HostMetrics& h = s.host;
  J j;
  j["t_ns"] = s.unix_ns;
  j["interval_s"] = s.interval_s;
  j["hostname"] = s.hostname;
  j["gpu_status"] = s.gpu_status.empty() ? J(nullptr) : J(s.gpu_status);
  J host;
  host["cpu_util"] = orNull(h.cpu_util);
  host["iowait"] = orNull(h.iowait);
  host["core_util"] = h.core_util;
  host["load"] = {{"1m", h.load1}, {"5m", h.load5}, {"15m", h.load15}};
  host["memory_total_bytes"] = h.memory_total_bytes;
  host["memory_available_bytes"] = h.memory_available_bytes;
  host["psi"] = {{"cpu_some", orNull(h.psi_cpu_some)},
                 {"io_some", orNull(h.psi_io_some)},
                 {"io_full", orNull(h.psi_io_full)},
                 {"memory_some", orNull(h.psi_memory_some)},
                 {"memory_full", orNull(h.psi_memory_full)}};
  J disks = J::array();
  for (const auto& d : h.disks)
    disks.push_back({{"name", d.name},
                     {"read_bytes_per_s", d.read_bytes_per_s},
                     {"write_bytes_per_s", d.write_bytes_per_s},
                     {"reads_per_s", d.reads_per_s},
                     {"writes_per_s", d.writes_per_s},
                     {"read_await_ms", d.read_await_ms},
                     {"write_await_ms", d.write_await_ms},
                     {"util", d.util},
                     {"queue", d.queue}});
  host["disks"] = disks;
  J nets = J::array();
  for (const auto& n : h.nets)
    nets.push_back({{"name", n.name},
                    {"infiniband", n.infiniband},
                    {"rx_bytes_per_s", n.rx_bytes_per_s},
                    {"tx_bytes_per_s", n.tx_bytes_per_s}});
  host["nets"] = nets;
  J procs = J::array();
  for (const auto& p : h.procs) procs.push_back({{"pid", p.pid}, {"comm", p.comm}, {"cpu_cores", p.cpu_cores}});
  host["procs"] = procs;
  j["host"] = host;
  J gpus = J::array();
  for (const auto& g : s.gpus)
    gpus.push_back({{"index", g.index},
                    {"uuid", g.uuid},
                    {"name", g.name},
                    {"pci_bus_id", g.pci_bus_id},
                    {"util", orNull(g.util_gpu)},
                    {"memory_util", orNull(g.util_memory)},
                    {"memory_used_bytes", g.memory_used_bytes},
                    {"memory_total_bytes", g.memory_total_bytes},
                    {"sm_clock_mhz", orNull(g.sm_clock_mhz)},
                    {"memory_clock_mhz", orNull(g.memory_clock_mhz)},
                    {"power_w", orNull(g.power_w)},
                    {"power_limit_w", orNull(g.power_limit_w)},
                    {"temperature_c", orNull(g.temperature_c)},
                    {"energy_j", orNull(g.energy_j)},
                    {"pcie_rx_bytes_per_s", orNull(g.pcie_rx_bytes_per_s)},
                    {"pcie_tx_bytes_per_s", orNull(g.pcie_tx_bytes_per_s)},
                    {"nvlink_rx_bytes_per_s", orNull(g.nvlink_rx_bytes_per_s)},
                    {"nvlink_tx_bytes_per_s", orNull(g.nvlink_tx_bytes_per_s)},
                    {"throttle_reasons", g.throttle_reasons},
                    {"xid_events", g.xid_events},
                    {"ecc_uncorrected", g.ecc_uncorrected < 0 ? J(nullptr) : J(g.ecc_uncorrected)},
                    {"pids", g.pids},
                    {"lost", g.lost.empty() ? J(nullptr) : J(g.lost)}});
  j["gpus"] = gpus;
  return j;
}
}  // namespace

std::string renderMonitorJson(const MonitorSample& s, const std::vector<HealthFlag>& flags, bool one_line) {
  nlohmann::ordered_json fl = nlohmann::ordered_json::array();
  for (const auto& f : flags)
    fl.push_back({{"subject", f.subject},
                  {"check", f.check},
                  {"ok", f.ok},
                  {"value", f.value},
                  {"threshold", f.threshold},
                  {"reason", f.reason}});
  nlohmann::ordered_json j;
  j["tool"] = "gpudoctor monitor";
  j["schema_version"] = 1;  // bumped when a field changes meaning or goes away
  j["sample"] = sampleObject(s);
  j["health"] = fl;
  return (one_line ? j.dump() : j.dump(1)) + "\n";
}

std::string renderPrometheus(const MonitorSample& s, const std::vector<HealthFlag>& flags) {
  std::string o;
  auto family = [&](const char* name, const char* type, const char* help) {
    o += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  };
  auto gpuLabels = [&](const GpuMetrics& g) {
    return fmt::format("gpu=\"{}\",UUID=\"{}\",pci_bus_id=\"{}\",device=\"nvidia{}\",modelName=\"{}\",Hostname=\"{}\"",
                       g.index, esc(g.uuid), esc(g.pci_bus_id), g.index, esc(g.name), esc(s.hostname));
  };
  struct GpuMetricDef {
    const char* name;
    const char* type;
    const char* help;
    double (*get)(const GpuMetrics&);
  };
  static const GpuMetricDef kGpu[] = {
      {"gpudoctor_gpu_utilization_ratio", "gauge", "Share of time a kernel ran (NVML utilization.gpu).",
       [](const GpuMetrics& g) { return g.util_gpu; }},
      {"gpudoctor_gpu_memory_utilization_ratio", "gauge", "Share of time device memory was read or written.",
       [](const GpuMetrics& g) { return g.util_memory; }},
      {"gpudoctor_gpu_memory_used_bytes", "gauge", "Device memory in use.",
       [](const GpuMetrics& g) { return g.memory_total_bytes ? static_cast<double>(g.memory_used_bytes) : -1.0; }},
      {"gpudoctor_gpu_memory_total_bytes", "gauge", "Device memory.",
       [](const GpuMetrics& g) { return g.memory_total_bytes ? static_cast<double>(g.memory_total_bytes) : -1.0; }},
      {"gpudoctor_gpu_sm_clock_hertz", "gauge", "SM clock.",
       [](const GpuMetrics& g) { return g.sm_clock_mhz < 0 ? -1 : g.sm_clock_mhz * 1e6; }},
      {"gpudoctor_gpu_memory_clock_hertz", "gauge", "Memory clock.",
       [](const GpuMetrics& g) { return g.memory_clock_mhz < 0 ? -1 : g.memory_clock_mhz * 1e6; }},
      {"gpudoctor_gpu_power_watts", "gauge", "Power draw.", [](const GpuMetrics& g) { return g.power_w; }},
      {"gpudoctor_gpu_power_limit_watts", "gauge", "Enforced power limit.",
       [](const GpuMetrics& g) { return g.power_limit_w; }},
      {"gpudoctor_gpu_energy_joules_total", "counter", "Energy since the driver loaded.",
       [](const GpuMetrics& g) { return g.energy_j; }},
      {"gpudoctor_gpu_temperature_celsius", "gauge", "GPU temperature.",
       [](const GpuMetrics& g) { return g.temperature_c; }},
      {"gpudoctor_gpu_pcie_receive_bytes_per_second", "gauge", "PCIe bytes received (NVML, 20 ms window).",
       [](const GpuMetrics& g) { return g.pcie_rx_bytes_per_s; }},
      {"gpudoctor_gpu_pcie_transmit_bytes_per_second", "gauge", "PCIe bytes sent (NVML, 20 ms window).",
       [](const GpuMetrics& g) { return g.pcie_tx_bytes_per_s; }},
      {"gpudoctor_gpu_nvlink_receive_bytes_per_second", "gauge", "NVLink data bytes received over the last interval.",
       [](const GpuMetrics& g) { return g.nvlink_rx_bytes_per_s; }},
      {"gpudoctor_gpu_nvlink_transmit_bytes_per_second", "gauge", "NVLink data bytes sent over the last interval.",
       [](const GpuMetrics& g) { return g.nvlink_tx_bytes_per_s; }},
      {"gpudoctor_gpu_clocks_event_reasons", "gauge", "NVML clocks-event (throttle) reason bit mask.",
       [](const GpuMetrics& g) { return static_cast<double>(g.throttle_reasons); }},
      {"gpudoctor_gpu_xid_events_total", "counter", "XID critical errors seen since the monitor started.",
       [](const GpuMetrics& g) { return static_cast<double>(g.xid_events); }},
      {"gpudoctor_gpu_ecc_uncorrected_errors", "gauge", "Volatile uncorrected ECC errors.",
       [](const GpuMetrics& g) { return static_cast<double>(g.ecc_uncorrected); }},
      {"gpudoctor_gpu_processes", "gauge", "Compute processes on the GPU.",
       [](const GpuMetrics& g) { return static_cast<double>(g.pids.size()); }},
  };
  if (!s.gpus.empty()) {
    family("gpudoctor_gpu_up", "gauge", "1 while NVML reaches the GPU, 0 once it fell off the bus.");
    for (const auto& g : s.gpus) o += fmt::format("gpudoctor_gpu_up{{{}}} {}\n", gpuLabels(g), g.lost.empty() ? 1 : 0);
    for (const auto& d : kGpu) {
      std::string lines;
      for (const auto& g : s.gpus) {
        double v = d.get(g);
        if (g.lost.empty() && v >= 0) lines += fmt::format("{}{{{}}} {}\n", d.name, gpuLabels(g), num(v));
      }
      if (lines.empty()) continue;
      family(d.name, d.type, d.help);
      o += lines;
    }
  }
  const HostMetrics& h = s.host;
  std::string host = fmt::format("Hostname=\"{}\"", esc(s.hostname));
  auto hostGauge = [&](const char* name, const char* help, double v) {
    if (v < 0) return;
    family(name, "gauge", help);
    o += fmt::format("{}{{{}}} {}\n", name, host, num(v));
  };
  hostGauge("gpudoctor_host_cpu_utilization_ratio", "Share of CPU time not idle or in IO wait.", h.cpu_util);
  hostGauge("gpudoctor_host_iowait_ratio", "Share of CPU time in IO wait.", h.iowait);
  hostGauge("gpudoctor_host_load1", "1-minute load average.", h.load1);
  hostGauge("gpudoctor_host_memory_total_bytes", "Host memory.", static_cast<double>(h.memory_total_bytes));
  hostGauge("gpudoctor_host_memory_available_bytes", "Host memory available.",
            static_cast<double>(h.memory_available_bytes));
  hostGauge("gpudoctor_host_pressure_io_waiting_ratio", "PSI: share of time some task waited for IO.", h.psi_io_some);
  hostGauge("gpudoctor_host_pressure_cpu_waiting_ratio", "PSI: share of time some task waited for a CPU.",
            h.psi_cpu_some);
  if (!h.disks.empty()) {
    struct D {
      const char* name;
      const char* help;
      double (*get)(const DiskRate&);
    };
    static const D kDisk[] = {
        {"gpudoctor_disk_read_bytes_per_second", "Bytes read.", [](const DiskRate& d) { return d.read_bytes_per_s; }},
        {"gpudoctor_disk_written_bytes_per_second", "Bytes written.",
         [](const DiskRate& d) { return d.write_bytes_per_s; }},
        {"gpudoctor_disk_read_await_seconds", "Mean time per completed read (iostat r_await).",
         [](const DiskRate& d) { return d.read_await_ms / 1e3; }},
        {"gpudoctor_disk_utilization_ratio", "Share of time with IO in flight (iostat %util).",
         [](const DiskRate& d) { return d.util; }},
    };
    for (const auto& k : kDisk) {
      family(k.name, "gauge", k.help);
      for (const auto& d : h.disks)
        o += fmt::format("{}{{{},device=\"{}\"}} {}\n", k.name, host, esc(d.name), num(k.get(d)));
    }
  }
  if (!h.nets.empty()) {
    family("gpudoctor_network_receive_bytes_per_second", "gauge", "Bytes received (interfaces and InfiniBand ports).");
    for (const auto& n : h.nets)
      o += fmt::format("gpudoctor_network_receive_bytes_per_second{{{},device=\"{}\",infiniband=\"{}\"}} {}\n", host,
                       esc(n.name), n.infiniband ? "true" : "false", num(n.rx_bytes_per_s));
    family("gpudoctor_network_transmit_bytes_per_second", "gauge", "Bytes sent (interfaces and InfiniBand ports).");
    for (const auto& n : h.nets)
      o += fmt::format("gpudoctor_network_transmit_bytes_per_second{{{},device=\"{}\",infiniband=\"{}\"}} {}\n", host,
                       esc(n.name), n.infiniband ? "true" : "false", num(n.tx_bytes_per_s));
  }
  if (!flags.empty()) {
    family("gpudoctor_health_ok", "gauge", "1 when a guide check passes, 0 when it is a red flag.");
    for (const auto& f : flags)
      o += fmt::format("gpudoctor_health_ok{{{},subject=\"{}\",check=\"{}\"}} {}\n", host, esc(f.subject), esc(f.check),
                       f.ok ? 1 : 0);
  }
  return o;
}

std::string renderMonitorSummary(const MonitorSummary& m) {
  std::string o = fmt::format("gpudoctor monitor recording: {} samples, {:.0f} s{}{}\n", m.samples, m.seconds,
                              m.hostname.empty() ? "" : " on " + m.hostname,
                              m.torn_tail ? " (last sample cut short by a kill: ignored)" : "");
  o += fmt::format(
      "host: CPU mean {:.0f} %, above {:.0f} % for {:.0f} s; IO wait mean {:.1f} %, above {:.0f} % for {:.0f} s\n",
      100 * m.cpu_mean, 100 * m.thresholds.at("cpu_max"), m.cpu_above_s, 100 * m.iowait_mean,
      100 * m.thresholds.at("io_wait_max"), m.iowait_above_s);
  for (const auto& g : m.gpus) {
    o += fmt::format("gpu{} {}: util mean {:.0f} %, below {:.0f} % for {:.0f} of {:.0f} s; memory peak {:.0f} %",
                     g.index, g.name, 100 * g.util_mean, 100 * m.thresholds.at("gpu_util_min"), g.util_below_s,
                     g.seconds, 100 * g.memory_peak);
    if (g.memory_above_s > 0)
      o += fmt::format(" (above {:.0f} % for {:.0f} s)", 100 * m.thresholds.at("gpu_memory_max"), g.memory_above_s);
    if (g.power_mean_w >= 0) o += fmt::format("; power mean {:.0f} W", g.power_mean_w);
    if (g.throttled_s > 0) o += fmt::format("; clocks held down {:.0f} s", g.throttled_s);
    if (g.lost_s > 0) o += fmt::format("; LOST for the last {:.0f} s", g.lost_s);
    o += "\n  bottleneck over time:";
    double total = g.seconds + g.lost_s;
    for (const auto& [b, sec] : g.bottleneck_s)
      o += fmt::format(" {} {:.0f} %", b, total > 0 ? 100 * sec / total : 0.0);
    o += fmt::format("  -> dominant: {}\n", g.dominant.empty() ? "n/a" : g.dominant);
  }
  return o;
}

std::string renderMonitorSummaryJson(const MonitorSummary& m) {
  nlohmann::ordered_json j;
  j["tool"] = "gpudoctor monitor report";
  j["schema_version"] = 1;  // bumped when a field changes meaning or goes away
  j["hostname"] = m.hostname;
  j["samples"] = m.samples;
  j["seconds"] = m.seconds;
  j["torn_tail"] = m.torn_tail;
  j["first_unix_ns"] = m.first_unix_ns;
  j["last_unix_ns"] = m.last_unix_ns;
  j["thresholds"] = m.thresholds;
  j["host"] = {{"cpu_mean", m.cpu_mean},
               {"cpu_above_s", m.cpu_above_s},
               {"iowait_mean", m.iowait_mean},
               {"iowait_above_s", m.iowait_above_s}};
  nlohmann::ordered_json gs = nlohmann::ordered_json::array();
  for (const auto& g : m.gpus)
    gs.push_back({{"gpu", g.index},
                  {"name", g.name},
                  {"uuid", g.uuid},
                  {"seconds", g.seconds},
                  {"util_mean", g.util_mean},
                  {"util_below_s", g.util_below_s},
                  {"memory_peak", g.memory_peak},
                  {"memory_above_s", g.memory_above_s},
                  {"power_mean_w", g.power_mean_w},
                  {"throttled_s", g.throttled_s},
                  {"lost_s", g.lost_s},
                  {"bottleneck_s", g.bottleneck_s},
                  {"dominant", g.dominant}});
  j["gpus"] = gs;
  return j.dump(1) + "\n";
}

}  // namespace gpudoctor
