// CUPTI for the recorder, loaded with dlopen so that a missing library is one line, not a failed
// injection: the table of the functions the recorder calls, CUPTI's clock, and the activity
// attributes GPUDOCTOR_RECORD_CUPTI_ATTRS sets.
#pragma once
#include <cupti.h>

#include <cstdint>
#include <string>

namespace gpudoctor::recorder {

struct Cupti {
  void* handle = nullptr;
  std::string path;
  // clang-format off
#define GD_CUPTI_FUNCS(X)                                                                              \
  X(cuptiGetVersion) X(cuptiGetTimestamp) X(cuptiSubscribe) X(cuptiActivityRegisterCallbacks)          \
  X(cuptiActivityEnable) X(cuptiActivityDisable) X(cuptiActivityEnableRuntimeApi)                       \
  X(cuptiActivityEnableDriverApi) X(cuptiActivityGetNextRecord) X(cuptiActivityFlushAll)                \
  X(cuptiActivityGetNumDroppedRecords) X(cuptiGetCallbackName) X(cuptiGetResultString)                  \
  X(cuptiSetThreadIdType) X(cuptiActivitySetAttribute) X(cuptiEnableCallback)
  // clang-format on
#define GD_DECLARE(name) decltype(&::name) name = nullptr;
  GD_CUPTI_FUNCS(GD_DECLARE)
#undef GD_DECLARE
  int (*nvtx_init)(const void*) = nullptr;  // CUPTI's InitializeInjectionNvtx2

  // Loads CUPTI: GPUDOCTOR_CUPTI (a path), then the names the loader finds (our RUNPATH, then
  // LD_LIBRARY_PATH and the system's), then the toolkit's usual places. Returns "" or the problem.
  std::string load();
};

extern Cupti g_cupti;

// CUPTI's timestamp (ns), 0 before CUPTI is loaded.
uint64_t cuptiNow();

// GPUDOCTOR_RECORD_CUPTI_ATTRS: CUPTI activity attributes for measuring what they cost, e.g.
// "pinned=1,per_thread=0,device_buffer_mb=64,semaphores=262144" (scripts/record/overhead_matrix.sh);
// by default CUPTI's own settings. Set before the buffer callbacks are registered, as CUPTI asks.
std::string setCuptiAttributes();

}  // namespace gpudoctor::recorder
