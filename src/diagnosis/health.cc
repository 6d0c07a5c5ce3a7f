#include "diagnosis/health.h"

#include <fmt/format.h>

namespace gpudoctor {
namespace {

// NVML clocks-event reasons that cost speed (GPU idle 0x1 and app-clock setting 0x2 do not).
constexpr uint64_t kSwPowerCap = 0x4, kHwSlowdown = 0x8, kSyncBoost = 0x10, kSwThermal = 0x20, kHwThermal = 0x40,
                   kHwPowerBrake = 0x80;
constexpr uint64_t kCostly = kSwPowerCap | kHwSlowdown | kSwThermal | kHwThermal | kHwPowerBrake;

double linkBytes(const MonitorSample& s, const GpuMetrics& g) {
  double v = 0;
  if (g.nvlink_rx_bytes_per_s > 0) v += g.nvlink_rx_bytes_per_s;
  if (g.nvlink_tx_bytes_per_s > 0) v += g.nvlink_tx_bytes_per_s;
  for (const auto& n : s.host.nets) v += n.rx_bytes_per_s + n.tx_bytes_per_s;
  return v;
}

// Communication worth naming: over 1 GB/s through NVLink or the network.
constexpr double kBusyLinkBytesPerS = 1e9;

}  // namespace

bool clocksHeldDown(uint64_t reasons) { return (reasons & kCostly) != 0; }

std::string throttleNames(uint64_t bits) {
  static const std::pair<uint64_t, const char*> k[] = {{0x1, "gpu-idle"},
                                                       {0x2, "app-clocks"},
                                                       {kSwPowerCap, "sw-power-cap"},
                                                       {kHwSlowdown, "hw-slowdown"},
                                                       {kSyncBoost, "sync-boost"},
                                                       {kSwThermal, "sw-thermal"},
                                                       {kHwThermal, "hw-thermal"},
                                                       {kHwPowerBrake, "hw-power-brake"},
                                                       {0x100, "display-clocks"}};
  std::string out;
  for (auto [b, n] : k)
    if (bits & b) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

std::string gpuBottleneck(const MonitorSample& s, const GpuMetrics& g, const Thresholds& t) {
  if (!g.lost.empty()) return "lost";
  if (g.util_gpu >= t.get(guide::kGpuUtilMin)) return "compute";
  if (s.host.iowait > t.get(guide::kIoWaitMax)) return "input";
  if (s.host.cpu_util > t.get(guide::kCpuMax)) return "host-cpu";
  for (const auto& p : s.host.procs)
    for (int pid : g.pids)
      if (p.pid == pid && p.cpu_cores >= 0.95) return "host-cpu";
  if (g.util_gpu >= 0 && g.pids.empty()) return "no-process";
  if (linkBytes(s, g) > kBusyLinkBytesPerS) return "communication";
  return "other";
}

std::vector<HealthFlag> judgeHealth(const MonitorSample& s, const Thresholds& t) {
  std::vector<HealthFlag> out;
  const double util_min = t.get(guide::kGpuUtilMin), mem_max = t.get(guide::kGpuMemoryMax),
               io_max = t.get(guide::kIoWaitMax), cpu_max = t.get(guide::kCpuMax);
  for (const auto& g : s.gpus) {
    std::string who = fmt::format("gpu{}", g.index);
    if (!g.lost.empty()) {
      out.push_back({who, "present", false, 0, 0, "GPU " + g.lost + ": check dmesg for XID 79 and nvidia-smi -q"});
      continue;
    }
    if (g.util_gpu >= 0) {
      HealthFlag f{who, "gpu_util", g.util_gpu >= util_min, g.util_gpu, util_min, ""};
      if (!f.ok) {
        std::string b = gpuBottleneck(s, g, t);
        if (b == "input")
          f.reason =
              fmt::format("input pipeline: host IO wait {:.0f} % (> {:.0f} %)", 100 * s.host.iowait, 100 * io_max);
        else if (b == "host-cpu")
          f.reason = s.host.cpu_util > cpu_max
                         ? fmt::format("host CPU {:.0f} % busy: data loading or kernel launches", 100 * s.host.cpu_util)
                         : "a process of this GPU keeps one core 100 % busy: single-threaded loading or launch-bound";
        else if (b == "no-process")
          f.reason = g.memory_used_bytes > (1ll << 30)
                         ? fmt::format(
                               "NVML lists no process on this GPU, yet {:.1f} GiB of its memory are in use: "
                               "processes of another container (PID namespace) or a context left behind "
                               "(nvidia-smi on the host names them)",
                               static_cast<double>(g.memory_used_bytes) / (1ull << 30))
                         : "no process is using this GPU";
        else if (b == "communication")
          f.reason = fmt::format("communication: {:.1f} GB/s over NVLink/network while the GPU is not busy",
                                 linkBytes(s, g) / 1e9);
        else
          f.reason = "nothing measured here explains it (syncs, small batches?): profile with gpudoctor analyze";
      }
      out.push_back(f);
    }
    if (g.memory_total_bytes > 0) {
      double used = static_cast<double>(g.memory_used_bytes) / static_cast<double>(g.memory_total_bytes);
      HealthFlag f{who, "gpu_memory", used <= mem_max, used, mem_max, ""};
      if (!f.ok)
        f.reason =
            g.pids.empty() && g.util_gpu >= 0
                ? "close to out of memory, with no process NVML can see: the memory is another container's or "
                  "a context left behind, not a job's micro-batch here"
                : "close to out of memory: smaller micro-batch, activation checkpointing or ZeRO (gpudoctor plan)";
      out.push_back(f);
    }
    if (clocksHeldDown(g.throttle_reasons)) {
      out.push_back({who, "clocks", false, static_cast<double>(g.throttle_reasons), 0,
                     "clocks held down: " + throttleNames(g.throttle_reasons & kCostly)});
    }
    // Hardware errors are red whatever else the GPU does.
    if (g.xid_events > 0)
      out.push_back({who, "xid", false, static_cast<double>(g.xid_events), 0,
                     fmt::format("{} XID event(s) since the monitor started: read them in dmesg (NVRM: Xid); 13/31/43 "
                                 "a kernel faulted, 48/63/64/92/94/95 memory ECC, 79 the GPU fell off the bus",
                                 g.xid_events)});
    if (g.ecc_uncorrected > 0)
      out.push_back({who, "ecc", false, static_cast<double>(g.ecc_uncorrected), 0,
                     fmt::format("{} uncorrected ECC error(s): results may be wrong; drain the node and check "
                                 "nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER",
                                 g.ecc_uncorrected)});
  }
  if (s.host.iowait >= 0) {
    HealthFlag f{"host", "io_wait", s.host.iowait <= io_max, s.host.iowait, io_max, ""};
    if (!f.ok) {
      std::string busiest;
      double u = -1;
      for (const auto& d : s.host.disks)
        if (d.util > u) {
          u = d.util;
          busiest = d.name;
        }
      f.reason = busiest.empty() ? "storage cannot keep up"
                                 : fmt::format(
                                       "storage cannot keep up ({} {:.0f} % busy): more DataLoader workers, "
                                       "shards (gpudoctor pack), a local cache",
                                       busiest, 100 * u);
    }
    out.push_back(f);
  }
  if (s.host.cpu_util >= 0) {
    HealthFlag f{"host", "cpu", s.host.cpu_util <= cpu_max, s.host.cpu_util, cpu_max, ""};
    if (!f.ok) f.reason = "host CPU saturated: fewer/lighter transforms, move augmentation to the GPU, or more cores";
    out.push_back(f);
  }
  return out;
}

}  // namespace gpudoctor
