// What `gpudoctor record` needs from this machine before it starts a job: a CUDA driver with a
// GPU, and a CUPTI library (both by dlopen, so a machine without them gets one clear line).
#pragma once
#include <string>
#include <vector>

#include "common/result.h"

namespace gpudoctor {

struct CudaDriverInfo {
  int devices = 0;
  int driver_version = 0;  // cuDriverGetVersion: 1000 * major + 10 * minor
};

// Loads libcuda.so.1 and counts the GPUs. Errors: no driver, cuInit failed, no GPU.
Result<CudaDriverInfo> probeCudaDriver();

// The CUPTI library the recorder should load: $GPUDOCTOR_CUPTI, then beside `beside_dir` (where
// the recorder library is), then the loader's search (LD_LIBRARY_PATH, ldconfig), then the CUDA
// toolkit's places. Returns the absolute path of the first that loads, or an Error listing the tries.
Result<std::string> findCupti(const std::string& beside_dir);

// libgpudoctor-record.so beside this binary (a build folder) or in ../lib (an install): its canonical
// path, or an Error saying where it was looked for.
Result<std::string> findRecorderLibrary();

}  // namespace gpudoctor
