// What a monitor recording says over its whole length: per GPU the time below / above each
// threshold and the bottleneck of each moment, tallied; for the host the same for IO wait and CPU.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "diagnosis/thresholds.h"
#include "model/monitor_sample.h"

namespace gpudoctor {

struct GpuSummary {
  int index = 0;
  std::string name, uuid;
  double seconds = 0;                          // covered by samples with figures for this GPU
  double util_mean = 0, util_below_s = 0;      // seconds with utilization under gpu_util_min
  double memory_peak = 0, memory_above_s = 0;  // peak used/total; seconds above gpu_memory_max
  double power_mean_w = -1, throttled_s = 0;   // seconds with a costly clocks-event reason
  double lost_s = 0;                           // seconds after NVML lost the GPU
  std::map<std::string, double> bottleneck_s;  // gpuBottleneck() -> seconds (incl. "lost")
  std::string dominant;                        // the bottleneck with most seconds
};

struct MonitorSummary {
  std::string hostname;
  int64_t first_unix_ns = 0, last_unix_ns = 0;
  size_t samples = 0;
  bool torn_tail = false;
  double seconds = 0;
  double iowait_above_s = 0, cpu_above_s = 0, cpu_mean = 0, iowait_mean = 0;
  std::vector<GpuSummary> gpus;
  std::map<std::string, double> thresholds;  // the values judged against
};

// Each sample counts for its interval_s. Pure.
MonitorSummary summarizeMonitor(const std::vector<MonitorSample>& samples, const Thresholds& t);

}  // namespace gpudoctor
