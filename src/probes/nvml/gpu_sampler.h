// Per-GPU live metrics from NVML for the monitor: utilization, memory, clocks, power and energy,
// temperature, PCIe and NVLink throughput, clock-event (throttle) reasons, XID events, ECC and
// the compute processes. A figure NVML does not give (old driver, unsupported) stays -1; a GPU
// that falls off the bus is reported as lost, and the others carry on.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "model/monitor_sample.h"
#include "probes/nvml/nvml_api.h"

namespace gpudoctor {

class GpuSampler {
 public:
  // Loads NVML (see nvml::load) and opens every GPU. No library or no driver: an Error whose
  // message the monitor prints once before going host-only.
  static Result<std::unique_ptr<GpuSampler>> open(const std::string& library = "");
  ~GpuSampler();
  // One reading of every GPU. NVLink rates are over the time since the previous call (-1 on the
  // first). `lost` is set on a GPU NVML no longer reaches. monotonic_ns: when the reading is taken
  // (0 = now; tests pass fixed times so rates are exact).
  std::vector<GpuMetrics> sample(int64_t monotonic_ns = 0);
  // nvmlDeviceGetTotalEnergyConsumption costs ~3 ms of CPU per GPU (H200, driver 580; the rest of a
  // reading ~1.9 ms): the cumulative counter is read at most this often and carried in between.
  static constexpr int64_t kEnergyEveryNs = 5'000'000'000;

 private:
  struct Dev {
    nvml::Device handle = nullptr;
    GpuMetrics base;  // identity: index, uuid, name, bus id
    bool lost = false;
    std::string lost_why;
    unsigned long long nvl_tx_kib = 0, nvl_rx_kib = 0;
    int64_t nvl_ns = 0;
    int nvl_mode = 0;  // NVLink counters: 0 not tried, 1 GPU total, 2 sum over links, -1 unavailable
    int64_t xid = 0;
    double energy_j = -1;  // the last reading of the energy counter, and when it was taken
    int64_t energy_ns = 0;
  };
  const nvml::Api* api_ = nullptr;
  std::vector<Dev> devs_;
  nvml::EventSet events_ = nullptr;
};

}  // namespace gpudoctor
