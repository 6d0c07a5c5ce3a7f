// What each NVML query the monitor makes costs, per GPU: median wall time and CPU time of the process
// (helper threads included) over N calls, then one whole GpuSampler::sample() (every query, every
// GPU). Finds the call that makes a monitor expensive (nvmlDeviceGetPcieThroughput samples ~20 ms inside the call).
//   nvml_cost [REPS (20)] [NVML_LIBRARY]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "probes/nvml/gpu_sampler.h"
#include "probes/nvml/nvml_api.h"

using namespace gpudoctor;

namespace {

double nowUs(clockid_t c) {
  timespec ts{};
  clock_gettime(c, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Runs f reps times; prints median wall and CPU microseconds and whether NVML answered.
void measure(const char* name, int gpu, int reps, const std::function<nvml::Return()>& f) {
  std::vector<double> wall, cpu;
  nvml::Return r = nvml::kSuccess;
  for (int i = 0; i < reps; ++i) {
    double w0 = nowUs(CLOCK_MONOTONIC), c0 = nowUs(CLOCK_PROCESS_CPUTIME_ID);
    r = f();
    cpu.push_back(nowUs(CLOCK_PROCESS_CPUTIME_ID) - c0);
    wall.push_back(nowUs(CLOCK_MONOTONIC) - w0);
  }
  std::printf("%4d  %-44s %12.1f %12.1f  %s\n", gpu, name, median(wall), median(cpu),
              r == nvml::kSuccess ? "ok" : "not answered");
}

}  // namespace

int main(int argc, char** argv) {
  int reps = argc > 1 ? std::atoi(argv[1]) : 20;
  std::string lib = argc > 2 ? argv[2] : "";
  if (reps < 1) {
    std::fprintf(stderr, "usage: nvml_cost [REPS (20)] [NVML_LIBRARY]\n");
    return 2;
  }
  auto api = nvml::load(lib);
  if (!api.ok()) {
    std::fprintf(stderr, "nvml_cost: %s\n", api.error().message.c_str());
    return 1;
  }
  const nvml::Api& a = *api.value();
  unsigned int n = 0;
  a.DeviceGetCount(&n);
  std::printf("NVML query cost, median of %d calls (microseconds; CPU = the whole process, helper threads included)\n",
              reps);
  std::printf("%4s  %-44s %12s %12s\n", "gpu", "query", "wall us", "CPU us");
  for (unsigned int i = 0; i < n; ++i) {
    nvml::Device d = nullptr;
    if (a.DeviceGetHandleByIndex(i, &d) != nvml::kSuccess) continue;
    int g = static_cast<int>(i);
    unsigned int v = 0;
    unsigned long long ull = 0;
    auto opt = [&](const char* name, auto fn, const std::function<nvml::Return()>& call) {
      if (fn) measure(name, g, reps, call);
    };
    opt("nvmlDeviceGetUtilizationRates", a.DeviceGetUtilizationRates, [&] {
      nvml::Utilization u{};
      return a.DeviceGetUtilizationRates(d, &u);
    });
    opt("nvmlDeviceGetMemoryInfo_v2", a.DeviceGetMemoryInfoV2, [&] {
      nvml::MemoryV2 m{};
      m.version = nvml::kMemoryV2Version;
      return a.DeviceGetMemoryInfoV2(d, &m);
    });
    opt("nvmlDeviceGetClockInfo (SM)", a.DeviceGetClockInfo,
        [&] { return a.DeviceGetClockInfo(d, nvml::kClockSm, &v); });
    opt("nvmlDeviceGetPowerUsage", a.DeviceGetPowerUsage, [&] { return a.DeviceGetPowerUsage(d, &v); });
    opt("nvmlDeviceGetEnforcedPowerLimit", a.DeviceGetEnforcedPowerLimit,
        [&] { return a.DeviceGetEnforcedPowerLimit(d, &v); });
    opt("nvmlDeviceGetTemperature", a.DeviceGetTemperature, [&] { return a.DeviceGetTemperature(d, 0, &v); });
    opt("nvmlDeviceGetTotalEnergyConsumption", a.DeviceGetTotalEnergyConsumption,
        [&] { return a.DeviceGetTotalEnergyConsumption(d, &ull); });
    opt("nvmlDeviceGetPcieThroughput (TX)", a.DeviceGetPcieThroughput,
        [&] { return a.DeviceGetPcieThroughput(d, 0, &v); });
    opt("nvmlDeviceGetClocksEventReasons", a.DeviceGetClocksEventReasons,
        [&] { return a.DeviceGetClocksEventReasons(d, &ull); });
    opt("nvmlDeviceGetTotalEccErrors", a.DeviceGetTotalEccErrors,
        [&] { return a.DeviceGetTotalEccErrors(d, 1, 0, &ull); });
    opt("nvmlDeviceGetComputeRunningProcesses", a.DeviceGetComputeRunningProcesses, [&] {
      nvml::ProcessInfo p[64];
      unsigned int c = 64;
      return a.DeviceGetComputeRunningProcesses(d, &c, p);
    });
    auto fields = [&](const char* name, std::vector<nvml::FieldValue> f) {
      opt(name, a.DeviceGetFieldValues, [&] {
        auto r = a.DeviceGetFieldValues(d, static_cast<int>(f.size()), f.data());
        for (auto& x : f)
          if (r == nvml::kSuccess && x.nvmlReturn != 0) r = static_cast<nvml::Return>(x.nvmlReturn);
        return r;
      });
    };
    std::vector<nvml::FieldValue> pcie(2), nvl(2);
    pcie[0].fieldId = 197, pcie[1].fieldId = 198;  // NVML_FI_DEV_PCIE_COUNT_TX_BYTES / RX_BYTES
    nvl[0].fieldId = nvml::kFieldNvLinkThroughputDataTx, nvl[1].fieldId = nvml::kFieldNvLinkThroughputDataRx;
    nvl[0].scopeId = nvl[1].scopeId = nvml::kScopeAllLinks;
    fields("fields: PCIe byte counters (197, 198)", pcie);
    fields("fields: NVLink data TX/RX, all links", nvl);
  }
  auto s = GpuSampler::open(lib);
  if (!s.ok()) {
    std::fprintf(stderr, "nvml_cost: %s\n", s.error().message.c_str());
    return 1;
  }
  s.value()->sample();
  measure("GpuSampler::sample (all queries, all GPUs)", -1, reps, [&] {
    s.value()->sample();
    return nvml::kSuccess;
  });
  return 0;
}
