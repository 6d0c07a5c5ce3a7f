// The recorder's configuration: the GPUDOCTOR_RECORD_* environment `record` sets, the host's name,
// and what is recorded (the activity kinds by name; the API calls the timeline needs, by the name
// the program called).
#pragma once
#include <cupti.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace gpudoctor::recorder {

// The first of the variables a, b, c, d set to a whole number, else -1.
int64_t envInt(const char* a, const char* b = nullptr, const char* c = nullptr, const char* d = nullptr);

// This host's name, with '/' and ' ' made '_' (it names files).
std::string hostName();

// CUPTI names some calls with a version suffix ("cudaLaunchKernel_v7000", "cuMemcpyHtoDAsync_v2"):
// the timeline uses the name the program called.
std::string apiName(const char* raw);

// The calls the timeline needs; everything else (cudaGetDevice, cuCtxGetCurrent, ...) is not
// recorded, which is most of CUPTI's API cost in framework code.
bool wantedApi(std::string_view n);

// What is recorded, by name (GPUDOCTOR_RECORD_KINDS, comma-separated, for measuring what each
// part costs; runtime/driver are the selected calls, all of them with --all-api). By default all
// but "sync" (CUPTI's synchronization records, the event ids of record/wait pairs: on with
// --sync-events) and "overhead" (CUPTI's own cost records). Measured on an H200 with the PyTorch
// job of scripts/record/torch_job.py (median of 5 runs, interleaved): the default +1.0 % step
// time, with sync and overhead records +28 % (scripts/record/overhead_matrix.sh, docs/record.md).
struct KindName {
  const char* name;
  CUpti_ActivityKind kind;
};
inline constexpr KindName kKinds[] = {{"kernel", CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL},
                                      {"memcpy", CUPTI_ACTIVITY_KIND_MEMCPY},
                                      {"memset", CUPTI_ACTIVITY_KIND_MEMSET},
                                      {"sync", CUPTI_ACTIVITY_KIND_SYNCHRONIZATION},
                                      {"marker", CUPTI_ACTIVITY_KIND_MARKER},
                                      {"overhead", CUPTI_ACTIVITY_KIND_OVERHEAD}};

// Whether the kind (or "runtime", "driver") is recorded: GPUDOCTOR_RECORD_KINDS, else the default.
bool kindWanted(const char* name);

}  // namespace gpudoctor::recorder
