#include "probes/nvml/nvml_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

namespace gpudoctor::nvml {

namespace {

struct Loaded {
  Api api;
  std::string error;
};

template <class Fn>
bool bind(void* h, Fn& fn, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (void* p = dlsym(h, n)) {
      fn = reinterpret_cast<Fn>(p);
      return true;
    }
  return false;
}

Loaded loadFrom(const std::string& requested) {
  Loaded l;
  std::vector<std::string> candidates;
  if (!requested.empty()) {
    candidates.push_back(requested);
  } else {
    const char* env = std::getenv("GPUDOCTOR_NVML_LIBRARY");
    if (env && *env)
      candidates.push_back(env);
    else
      candidates = {"libnvidia-ml.so.1",
                    "/usr/local/nvidia/lib64/libnvidia-ml.so.1",
                    "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
                    "/usr/lib64/libnvidia-ml.so.1",
                    "/usr/lib/aarch64-linux-gnu/libnvidia-ml.so.1",
                    "/usr/lib/wsl/lib/libnvidia-ml.so.1"};
  }
  void* h = nullptr;
  std::string first_error;
  for (const auto& c : candidates) {
    h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h) {
      l.api.library = c;
      break;
    }
    if (first_error.empty()) first_error = dlerror();
  }
  if (!h) {
    l.error = "cannot load NVML (" + first_error +
              "): no NVIDIA driver here? Set GPUDOCTOR_NVML_LIBRARY to libnvidia-ml.so.1's path";
    return l;
  }
  Api& a = l.api;
  std::string missing;
  auto need = [&](bool ok, const char* name) {
    if (!ok && missing.empty()) missing = name;
  };
  need(bind(h, a.Init, {"nvmlInit_v2", "nvmlInit"}), "nvmlInit_v2");
  bind(h, a.ErrorString, {"nvmlErrorString"});
  need(bind(h, a.DeviceGetCount, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"}), "nvmlDeviceGetCount_v2");
  need(bind(h, a.DeviceGetHandleByIndex, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"}),
       "nvmlDeviceGetHandleByIndex_v2");
  need(bind(h, a.DeviceGetName, {"nvmlDeviceGetName"}), "nvmlDeviceGetName");
  need(bind(h, a.DeviceGetUUID, {"nvmlDeviceGetUUID"}), "nvmlDeviceGetUUID");
  need(bind(h, a.DeviceGetPciInfo, {"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2"}), "nvmlDeviceGetPciInfo_v3");
  need(bind(h, a.DeviceGetTopologyCommonAncestor, {"nvmlDeviceGetTopologyCommonAncestor"}),
       "nvmlDeviceGetTopologyCommonAncestor");
  bind(h, a.DeviceGetNvLinkState, {"nvmlDeviceGetNvLinkState"});
  bind(h, a.DeviceGetFieldValues, {"nvmlDeviceGetFieldValues"});
  bind(h, a.DeviceGetNvLinkRemotePciInfo, {"nvmlDeviceGetNvLinkRemotePciInfo_v2"});
  bind(h, a.DeviceGetNvLinkRemoteDeviceType, {"nvmlDeviceGetNvLinkRemoteDeviceType"});
  bind(h, a.DeviceGetCpuAffinity, {"nvmlDeviceGetCpuAffinity"});
  bind(h, a.DeviceGetNumaNodeId, {"nvmlDeviceGetNumaNodeId"});
  bind(h, a.DeviceGetCudaComputeCapability, {"nvmlDeviceGetCudaComputeCapability"});
  bind(h, a.DeviceGetMaxPcieLinkGeneration, {"nvmlDeviceGetMaxPcieLinkGeneration"});
  bind(h, a.DeviceGetMaxPcieLinkWidth, {"nvmlDeviceGetMaxPcieLinkWidth"});
  bind(h, a.DeviceGetUtilizationRates, {"nvmlDeviceGetUtilizationRates"});
  bind(h, a.DeviceGetMemoryInfoV2, {"nvmlDeviceGetMemoryInfo_v2"});
  bind(h, a.DeviceGetMemoryInfo, {"nvmlDeviceGetMemoryInfo"});
  bind(h, a.DeviceGetClockInfo, {"nvmlDeviceGetClockInfo"});
  bind(h, a.DeviceGetPowerUsage, {"nvmlDeviceGetPowerUsage"});
  bind(h, a.DeviceGetEnforcedPowerLimit, {"nvmlDeviceGetEnforcedPowerLimit"});
  bind(h, a.DeviceGetTotalEnergyConsumption, {"nvmlDeviceGetTotalEnergyConsumption"});
  bind(h, a.DeviceGetTemperature, {"nvmlDeviceGetTemperature"});
  bind(h, a.DeviceGetPcieThroughput, {"nvmlDeviceGetPcieThroughput"});
  bind(h, a.DeviceGetClocksEventReasons,
       {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
  bind(h, a.DeviceGetComputeRunningProcesses,
       {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"});
  bind(h, a.DeviceGetComputeRunningProcessesV1, {"nvmlDeviceGetComputeRunningProcesses"});
  bind(h, a.DeviceGetTotalEccErrors, {"nvmlDeviceGetTotalEccErrors"});
  bind(h, a.EventSetCreate, {"nvmlEventSetCreate"});
  bind(h, a.DeviceRegisterEvents, {"nvmlDeviceRegisterEvents"});
  bind(h, a.EventSetWait, {"nvmlEventSetWait_v2"});
  bind(h, a.EventSetFree, {"nvmlEventSetFree"});
  if (!missing.empty()) {
    l.error = a.library + " has no " + missing + " (driver too old for gpudoctor topo?)";
    return l;
  }
  Return r = a.Init();
  if (r != kSuccess)
    l.error = a.library + ": nvmlInit failed: " + errorString(a, r) + " (is the NVIDIA driver loaded?)";
  return l;
}

}  // namespace

std::string errorString(const Api& api, Return r) {
  if (api.ErrorString) {
    const char* s = api.ErrorString(r);
    if (s) return s;
  }
  return "NVML error " + std::to_string(static_cast<int>(r));
}

Result<const Api*> load(const std::string& library) {
  // NVML stays loaded for the process (as nvidia-smi and NCCL keep it); one entry per path asked.
  static std::mutex mu;
  static std::map<std::string, Loaded>* cache = new std::map<std::string, Loaded>();
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache->find(library);
  if (it == cache->end()) it = cache->emplace(library, loadFrom(library)).first;
  if (!it->second.error.empty()) return Error{it->second.error};
  return &it->second.api;
}

}  // namespace gpudoctor::nvml
