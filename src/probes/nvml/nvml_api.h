// NVML reached through dlopen with our own minimal declarations (no nvml.h, no link dependency),
// nvtop style: one loader and one symbol table, newest symbol versions first, missing library or
// driver is an Error value. Topology discovery and the live monitor share it.
#pragma once
#include <string>

#include "common/result.h"

namespace gpudoctor::nvml {

// nvmlReturn_t values we act on (nvml.h); any other is passed to errorString.
enum Return : int {
  kSuccess = 0,
  kFunctionNotFound = 13,  // NVML_ERROR_FUNCTION_NOT_FOUND: also what we return for an absent symbol
  kGpuIsLost = 15,         // NVML_ERROR_GPU_IS_LOST
};
using Device = struct DeviceOpaque*;

constexpr int kNvLinkMaxLinks = 18;   // NVML_NVLINK_MAX_LINKS (Hopper)
constexpr int kBusIdSize = 32;        // NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE
constexpr int kBusIdLegacySize = 16;  // NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE

// nvmlPciInfo_t (v3 layout: the legacy 16-byte bus id first).
struct PciInfo {
  char busIdLegacy[kBusIdLegacySize];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[kBusIdSize];
};

// nvmlFieldValue_t (nvmlDeviceGetFieldValues): one sample of a field, per link through scopeId.
union Value {
  double d;
  unsigned int ui;
  unsigned long ul;
  unsigned long long ull;
  long long sll;
  int si;
};
struct FieldValue {
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;
  long long latencyUsec;
  int valueType;   // nvmlValueType_t
  int nvmlReturn;  // nvmlReturn_t of this field
  Value value;
};
constexpr unsigned int kFieldNvLinkGetState = 165;  // NVML_FI_DEV_NVLINK_GET_STATE (scopeId = link)

constexpr unsigned int kFieldNvLinkThroughputDataTx = 138;  // NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX (KiB, cumulative)
constexpr unsigned int kFieldNvLinkThroughputDataRx = 139;  // NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX
constexpr unsigned int kScopeAllLinks = 0xFFFFFFFF;         // scopeId: the GPU's total over its links

// The monitor's structures (nvml.h layouts).
struct Utilization {
  unsigned int gpu, memory;  // percent over the driver's last sample period
};
struct MemoryV1 {
  unsigned long long total, free, used;
};
struct MemoryV2 {
  unsigned int version;  // kMemoryV2Version
  unsigned long long total, reserved, free, used;
};
constexpr unsigned int kMemoryV2Version = static_cast<unsigned int>(sizeof(MemoryV2)) | (2u << 24);
struct ProcessInfoV1 {
  unsigned int pid;
  unsigned long long usedGpuMemory;
};
struct ProcessInfo {  // _v2 and _v3 share this layout
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId, computeInstanceId;
};
using EventSet = struct EventSetOpaque*;
struct EventData {
  Device device;
  unsigned long long eventType, eventData;
  unsigned int gpuInstanceId, computeInstanceId;
};
constexpr unsigned long long kEventXidCritical = 0x8;  // nvmlEventTypeXidCriticalError
enum ClockType : int { kClockSm = 1, kClockMem = 2 };

// nvmlIntNvLinkDeviceType_t
enum NvLinkDeviceType : int { kNvLinkGpu = 0, kNvLinkIbmNpu = 1, kNvLinkSwitch = 2, kNvLinkUnknown = 0xFF };

// The symbol table. Required entries are non-null after load(); optional ones may be null.
struct Api {
  Return (*Init)() = nullptr;  // nvmlInit_v2, else nvmlInit
  const char* (*ErrorString)(Return) = nullptr;
  Return (*DeviceGetCount)(unsigned int*) = nullptr;                  // _v2, else plain
  Return (*DeviceGetHandleByIndex)(unsigned int, Device*) = nullptr;  // _v2, else plain
  Return (*DeviceGetName)(Device, char*, unsigned int) = nullptr;
  Return (*DeviceGetUUID)(Device, char*, unsigned int) = nullptr;
  Return (*DeviceGetPciInfo)(Device, PciInfo*) = nullptr;  // _v3, else _v2
  Return (*DeviceGetTopologyCommonAncestor)(Device, Device, int*) = nullptr;
  // Optional: absent on old drivers or unsupported builds; callers treat null as not supported.
  Return (*DeviceGetNvLinkState)(Device, unsigned int, int*) = nullptr;
  Return (*DeviceGetFieldValues)(Device, int, FieldValue*) = nullptr;  // Hopper link state (as NCCL reads it)
  Return (*DeviceGetNvLinkRemotePciInfo)(Device, unsigned int, PciInfo*) = nullptr;  // _v2
  Return (*DeviceGetNvLinkRemoteDeviceType)(Device, unsigned int, int*) = nullptr;
  Return (*DeviceGetCpuAffinity)(Device, unsigned int, unsigned long*) = nullptr;
  Return (*DeviceGetNumaNodeId)(Device, unsigned int*) = nullptr;
  Return (*DeviceGetCudaComputeCapability)(Device, int*, int*) = nullptr;
  Return (*DeviceGetMaxPcieLinkGeneration)(Device, unsigned int*) = nullptr;
  Return (*DeviceGetMaxPcieLinkWidth)(Device, unsigned int*) = nullptr;
  // The live monitor's (all optional: a missing one leaves that figure "not available").
  Return (*DeviceGetUtilizationRates)(Device, Utilization*) = nullptr;
  Return (*DeviceGetMemoryInfoV2)(Device, MemoryV2*) = nullptr;  // nvmlDeviceGetMemoryInfo_v2
  Return (*DeviceGetMemoryInfo)(Device, MemoryV1*) = nullptr;    // older drivers
  Return (*DeviceGetClockInfo)(Device, int, unsigned int*) = nullptr;
  Return (*DeviceGetPowerUsage)(Device, unsigned int*) = nullptr;                    // mW
  Return (*DeviceGetEnforcedPowerLimit)(Device, unsigned int*) = nullptr;            // mW
  Return (*DeviceGetTotalEnergyConsumption)(Device, unsigned long long*) = nullptr;  // mJ
  Return (*DeviceGetTemperature)(Device, int, unsigned int*) = nullptr;
  Return (*DeviceGetPcieThroughput)(Device, int, unsigned int*) = nullptr;  // KB/s; 0 = TX, 1 = RX
  Return (*DeviceGetClocksEventReasons)(Device, unsigned long long*) =
      nullptr;  // ...ClocksEventReasons, else ...ThrottleReasons
  Return (*DeviceGetComputeRunningProcesses)(Device, unsigned int*, ProcessInfo*) = nullptr;  // _v3, else _v2
  Return (*DeviceGetComputeRunningProcessesV1)(Device, unsigned int*, ProcessInfoV1*) = nullptr;
  Return (*DeviceGetTotalEccErrors)(Device, int, int, unsigned long long*) = nullptr;
  Return (*EventSetCreate)(EventSet*) = nullptr;
  Return (*DeviceRegisterEvents)(Device, unsigned long long, EventSet) = nullptr;
  Return (*EventSetWait)(EventSet, EventData*, unsigned int) = nullptr;  // _v2
  Return (*EventSetFree)(EventSet) = nullptr;
  std::string library;  // what was loaded
};

// Loads NVML once per library path and calls nvmlInit. `library` empty: GPUDOCTOR_NVML_LIBRARY,
// else libnvidia-ml.so.1 on the loader path, else the usual install folders (including
// /usr/local/nvidia/lib64, where containers get the driver's libraries).
Result<const Api*> load(const std::string& library = "");
// NVML's message for a return code (or the number when ErrorString is absent).
std::string errorString(const Api& api, Return r);

}  // namespace gpudoctor::nvml
