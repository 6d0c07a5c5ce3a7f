#include "diagnosis/monitor_summary.h"

#include "diagnosis/health.h"

namespace gpudoctor {

MonitorSummary summarizeMonitor(const std::vector<MonitorSample>& samples, const Thresholds& t) {
  MonitorSummary m;
  const double util_min = t.get(guide::kGpuUtilMin), mem_max = t.get(guide::kGpuMemoryMax),
               io_max = t.get(guide::kIoWaitMax), cpu_max = t.get(guide::kCpuMax);
  m.thresholds = {
      {"gpu_util_min", util_min}, {"gpu_memory_max", mem_max}, {"io_wait_max", io_max}, {"cpu_max", cpu_max}};
  m.samples = samples.size();
  if (samples.empty()) return m;
  m.hostname = samples.front().hostname;
  m.first_unix_ns = samples.front().unix_ns;
  m.last_unix_ns = samples.back().unix_ns;
  std::map<int, GpuSummary> gpus;
  std::map<int, double> power_s;
  double host_s = 0;
  for (const auto& s : samples) {
    double dt = s.interval_s > 0 ? s.interval_s : 0;
    m.seconds += dt;
    if (s.host.cpu_util >= 0) {
      host_s += dt;
      m.cpu_mean += s.host.cpu_util * dt;
      m.iowait_mean += s.host.iowait * dt;
      if (s.host.cpu_util > cpu_max) m.cpu_above_s += dt;
      if (s.host.iowait > io_max) m.iowait_above_s += dt;
    }
    for (const auto& g : s.gpus) {
      GpuSummary& x = gpus[g.index];
      x.index = g.index;
      x.name = g.name;
      x.uuid = g.uuid;
      if (!g.lost.empty()) {
        x.lost_s += dt;
        x.bottleneck_s["lost"] += dt;
        continue;
      }
      if (g.util_gpu < 0) continue;
      x.seconds += dt;
      x.util_mean += g.util_gpu * dt;
      if (g.util_gpu < util_min) x.util_below_s += dt;
      if (g.memory_total_bytes > 0) {
        double used = static_cast<double>(g.memory_used_bytes) / static_cast<double>(g.memory_total_bytes);
        x.memory_peak = std::max(x.memory_peak, used);
        if (used > mem_max) x.memory_above_s += dt;
      }
      if (g.power_w >= 0) {
        x.power_mean_w = (x.power_mean_w < 0 ? 0 : x.power_mean_w) + g.power_w * dt;
        power_s[g.index] += dt;
      }
      if (clocksHeldDown(g.throttle_reasons)) x.throttled_s += dt;
      x.bottleneck_s[gpuBottleneck(s, g, t)] += dt;
    }
  }
  if (host_s > 0) {
    m.cpu_mean /= host_s;
    m.iowait_mean /= host_s;
  }
  for (auto& [i, x] : gpus) {
    if (x.seconds > 0) x.util_mean /= x.seconds;
    if (power_s[i] > 0) x.power_mean_w /= power_s[i];
    double best = -1;
    for (const auto& [b, sec] : x.bottleneck_s)
      if (sec > best) {
        best = sec;
        x.dominant = b;
      }
    m.gpus.push_back(x);
  }
  return m;
}

}  // namespace gpudoctor
