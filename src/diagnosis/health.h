// The guide's live health flags (GPU utilization > 90 %, GPU memory < 95 %, IO wait < 10 %, CPU <
// 80 %) judged on one monitor sample against the thresholds table, each red flag with its most
// likely reason from the other metrics of the same moment; and the bottleneck a moment shows.
#pragma once
#include <string>
#include <vector>

#include "diagnosis/thresholds.h"
#include "model/monitor_sample.h"

namespace gpudoctor {

struct HealthFlag {
  std::string subject;  // "gpu0", "host"
  std::string check;    // "gpu_util", "gpu_memory", "io_wait", "cpu", "clocks"
  bool ok = true;
  double value = 0, threshold = 0;
  std::string reason;  // for a red flag: what the other metrics point at
};

// Every check that this sample has the figures for.
std::vector<HealthFlag> judgeHealth(const MonitorSample& s, const Thresholds& t);

// What limited one GPU during the sample: "compute" (busy), "input" (host IO wait), "host-cpu",
// "communication" (NVLink/network busy while the GPU is not), "no-process", "lost", or "other".
std::string gpuBottleneck(const MonitorSample& s, const GpuMetrics& g, const Thresholds& t);

// Whether NVML's clock-event reasons include one that costs speed (power cap, thermal, hardware
// slowdown or power brake; not idle or application clocks).
bool clocksHeldDown(uint64_t reasons);

// Names of the set NVML clock-event (throttle) reason bits, e.g. "sw-power-cap, hw-thermal".
std::string throttleNames(uint64_t bits);

}  // namespace gpudoctor
