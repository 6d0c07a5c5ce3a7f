// The NCCL library installed on this host, found with dlopen (no link-time dependency), and NCCL
// version strings. Absent library: a value saying so, never a crash.
#pragma once
#include <string>

#include "common/result.h"
#include "model/nccl.h"

namespace gpudoctor {

struct InstalledNccl {
  bool found = false;
  NcclVersion version = 0;
  std::string library;  // the file dlopen resolved
  std::string note;     // why not found
};

// dlopen("libnccl.so.2") (or GPUDOCTOR_NCCL_LIBRARY) and ncclGetVersion.
InstalledNccl probeInstalledNccl();

}  // namespace gpudoctor
