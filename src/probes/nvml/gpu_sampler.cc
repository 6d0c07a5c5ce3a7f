#include "probes/nvml/gpu_sampler.h"

#include <array>
#include <ctime>
#include <thread>

#include "common/clock.h"

namespace gpudoctor {
Result<std::unique_ptr<GpuSampler>> GpuSampler::open(const std::string& library) {
  auto api = nvml::load(library);
  if (!api.ok()) return api.error();
  const nvml::Api& a = *api.value();
  unsigned int n = 0;
  if (nvml::Return r = a.DeviceGetCount(&n); r != nvml::kSuccess)
    return Error{"NVML cannot count GPUs: " + nvml::errorString(a, r)};
  auto s = std::unique_ptr<GpuSampler>(new GpuSampler);
  s->api_ = &a;
  if (a.EventSetCreate && a.DeviceRegisterEvents && a.EventSetWait && a.EventSetCreate(&s->events_) != nvml::kSuccess)
    s->events_ = nullptr;
  for (unsigned int i = 0; i < n; ++i) {
    Dev d;
    d.base.index = static_cast<int>(i);
    if (nvml::Return r = a.DeviceGetHandleByIndex(i, &d.handle); r != nvml::kSuccess) {
      d.lost = true;
      d.lost_why = "NVML cannot open it: " + nvml::errorString(a, r);
    } else {
      char buf[256] = {};
      if (a.DeviceGetName(d.handle, buf, sizeof buf) == nvml::kSuccess) d.base.name = buf;
      if (a.DeviceGetUUID(d.handle, buf, sizeof buf) == nvml::kSuccess) d.base.uuid = buf;
      nvml::PciInfo pci{};
      if (a.DeviceGetPciInfo(d.handle, &pci) == nvml::kSuccess) d.base.pci_bus_id = pci.busId;
      // Only XID events: registering for all would include ones a device does not support.
      if (s->events_ && a.DeviceRegisterEvents(d.handle, nvml::kEventXidCritical, s->events_) != nvml::kSuccess) {
        // Unsupported on this device (e.g. in some VMs): XID counts stay 0 for it.
      }
    }
    s->devs_.push_back(d);
  }
  return s;
}

GpuSampler::~GpuSampler() {
  if (events_ && api_->EventSetFree) api_->EventSetFree(events_);
}

std::vector<GpuMetrics> GpuSampler::sample(int64_t monotonic_ns) {
  const nvml::Api& a = *api_;
  const int64_t now = monotonic_ns ? monotonic_ns : monotonicNs();
  // Drain XID events first (timeout 0: never blocks the sampling loop).
  if (events_) {
    nvml::EventData e{};
    for (int k = 0; k < 64 && a.EventSetWait(events_, &e, 0) == nvml::kSuccess; ++k)
      for (auto& d : devs_)
        if (d.handle == e.device && (e.eventType & nvml::kEventXidCritical)) ++d.xid;
  }
  // PCIe: nvmlDeviceGetPcieThroughput samples for ~20 ms inside each call, per direction. The calls for
  // every GPU and direction run at once, so a reading waits ~20 ms whatever the number of GPUs. (NVML's
  // cumulative PCIe byte fields, 197/198, are no substitute: on H200 with driver 580 they wrap within a
  // second under load and read 3.4 GB/s where 54 GB/s was copied; docs/monitor_h200.md.)
  std::vector<std::array<double, 2>> pcie(devs_.size(), {-1.0, -1.0});
  if (a.DeviceGetPcieThroughput) {
    std::vector<std::thread> readers;
    for (size_t k = 0; k < devs_.size(); ++k)
      for (int dir = 0; dir < 2; ++dir)
        if (!devs_[k].lost)
          readers.emplace_back([&a, &pcie, h = devs_[k].handle, k, dir] {
            unsigned int kbs = 0;
            if (a.DeviceGetPcieThroughput(h, dir, &kbs) == nvml::kSuccess) pcie[k][dir] = 1024.0 * kbs;  // KB/s, 0 = TX
          });
    for (auto& t : readers) t.join();
  }
  std::vector<GpuMetrics> out;
  for (size_t k = 0; k < devs_.size(); ++k) {
    Dev& d = devs_[k];
    GpuMetrics g = d.base;
    g.xid_events = d.xid;
    if (d.lost) {
      g.lost = d.lost_why;
      out.push_back(g);
      continue;
    }
    nvml::Utilization u{};
    nvml::Return r = a.DeviceGetUtilizationRates ? a.DeviceGetUtilizationRates(d.handle, &u) : nvml::kFunctionNotFound;
    if (r == nvml::kGpuIsLost) {
      d.lost = true;
      d.lost_why = "fell off the bus (NVML: " + nvml::errorString(a, r) + ")";
      g.lost = d.lost_why;
      out.push_back(g);
      continue;
    }
    if (r == nvml::kSuccess) {
      g.util_gpu = u.gpu / 100.0;
      g.util_memory = u.memory / 100.0;
    }
    nvml::MemoryV2 m2{};
    m2.version = nvml::kMemoryV2Version;
    nvml::MemoryV1 m1{};
    if (a.DeviceGetMemoryInfoV2 && a.DeviceGetMemoryInfoV2(d.handle, &m2) == nvml::kSuccess) {
      g.memory_used_bytes = m2.used;
      g.memory_total_bytes = m2.total;
    } else if (a.DeviceGetMemoryInfo && a.DeviceGetMemoryInfo(d.handle, &m1) == nvml::kSuccess) {
      g.memory_used_bytes = m1.used;
      g.memory_total_bytes = m1.total;
    }
    unsigned int v = 0;
    if (a.DeviceGetClockInfo && a.DeviceGetClockInfo(d.handle, nvml::kClockSm, &v) == nvml::kSuccess)
      g.sm_clock_mhz = v;
    if (a.DeviceGetClockInfo && a.DeviceGetClockInfo(d.handle, nvml::kClockMem, &v) == nvml::kSuccess)
      g.memory_clock_mhz = v;
    if (a.DeviceGetPowerUsage && a.DeviceGetPowerUsage(d.handle, &v) == nvml::kSuccess) g.power_w = v / 1000.0;
    if (a.DeviceGetEnforcedPowerLimit && a.DeviceGetEnforcedPowerLimit(d.handle, &v) == nvml::kSuccess)
      g.power_limit_w = v / 1000.0;
    if (a.DeviceGetTemperature && a.DeviceGetTemperature(d.handle, 0, &v) == nvml::kSuccess) g.temperature_c = v;
    unsigned long long ull = 0;
    if (a.DeviceGetTotalEnergyConsumption && (d.energy_ns == 0 || now - d.energy_ns >= kEnergyEveryNs)) {
      d.energy_ns = now;
      if (a.DeviceGetTotalEnergyConsumption(d.handle, &ull) == nvml::kSuccess)
        d.energy_j = static_cast<double>(ull) / 1000.0;
    }
    g.energy_j = d.energy_j;
    if (pcie[k][0] >= 0) g.pcie_tx_bytes_per_s = pcie[k][0];
    if (pcie[k][1] >= 0) g.pcie_rx_bytes_per_s = pcie[k][1];
    if (a.DeviceGetClocksEventReasons && a.DeviceGetClocksEventReasons(d.handle, &ull) == nvml::kSuccess)
      g.throttle_reasons = ull;
    if (a.DeviceGetTotalEccErrors && a.DeviceGetTotalEccErrors(d.handle, 1, 0, &ull) == nvml::kSuccess)
      g.ecc_uncorrected = static_cast<int64_t>(ull);
    // Processes: ask for the count with room for 64 (NVML answers INSUFFICIENT_SIZE beyond that).
    unsigned int count = 64;
    if (a.DeviceGetComputeRunningProcesses) {
      nvml::ProcessInfo p[64];
      if (a.DeviceGetComputeRunningProcesses(d.handle, &count, p) == nvml::kSuccess)
        for (unsigned int j = 0; j < count; ++j) g.pids.push_back(static_cast<int>(p[j].pid));
    } else if (a.DeviceGetComputeRunningProcessesV1) {
      nvml::ProcessInfoV1 p[64];
      if (a.DeviceGetComputeRunningProcessesV1(d.handle, &count, p) == nvml::kSuccess)
        for (unsigned int j = 0; j < count; ++j) g.pids.push_back(static_cast<int>(p[j].pid));
    }
    // NVLink: cumulative KiB; a rate needs the previous reading. The GPU's total (scope: all links)
    // where the driver answers it, else the sum over links; the way found first is kept, so two
    // readings are always comparable.
    if (a.DeviceGetFieldValues && d.nvl_mode >= 0) {
      unsigned long long tx = 0, rx = 0;
      bool ok = false;
      if (d.nvl_mode <= 1) {
        nvml::FieldValue f[2] = {};
        f[0].fieldId = nvml::kFieldNvLinkThroughputDataTx;
        f[1].fieldId = nvml::kFieldNvLinkThroughputDataRx;
        f[0].scopeId = f[1].scopeId = nvml::kScopeAllLinks;
        ok = a.DeviceGetFieldValues(d.handle, 2, f) == nvml::kSuccess && f[0].nvmlReturn == 0 && f[1].nvmlReturn == 0;
        if (ok) {
          tx = f[0].value.ull;
          rx = f[1].value.ull;
          d.nvl_mode = 1;
        }
      }
      if (!ok && d.nvl_mode != 1) {
        nvml::FieldValue f[2 * nvml::kNvLinkMaxLinks] = {};
        for (unsigned int l = 0; l < nvml::kNvLinkMaxLinks; ++l) {
          f[2 * l].fieldId = nvml::kFieldNvLinkThroughputDataTx;
          f[2 * l + 1].fieldId = nvml::kFieldNvLinkThroughputDataRx;
          f[2 * l].scopeId = f[2 * l + 1].scopeId = l;
        }
        if (a.DeviceGetFieldValues(d.handle, 2 * nvml::kNvLinkMaxLinks, f) == nvml::kSuccess)
          for (unsigned int l = 0; l < nvml::kNvLinkMaxLinks; ++l)
            if (f[2 * l].nvmlReturn == 0 && f[2 * l + 1].nvmlReturn == 0) {
              tx += f[2 * l].value.ull;
              rx += f[2 * l + 1].value.ull;
              ok = true;
            }
        d.nvl_mode = ok ? 2 : (d.nvl_mode == 0 ? -1 : d.nvl_mode);  // neither way: stop asking
      }
      if (ok) {
        if (d.nvl_ns > 0 && now > d.nvl_ns && tx >= d.nvl_tx_kib && rx >= d.nvl_rx_kib) {
          double dt = static_cast<double>(now - d.nvl_ns) / 1e9;
          g.nvlink_tx_bytes_per_s = 1024.0 * static_cast<double>(tx - d.nvl_tx_kib) / dt;
          g.nvlink_rx_bytes_per_s = 1024.0 * static_cast<double>(rx - d.nvl_rx_kib) / dt;
        }
        d.nvl_tx_kib = tx;
        d.nvl_rx_kib = rx;
        d.nvl_ns = now;
      }
    }
    out.push_back(g);
  }
  return out;
}

}  // namespace gpudoctor
