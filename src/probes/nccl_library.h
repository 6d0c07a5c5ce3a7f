// The NCCL library installed on this host, found with dlopen (no link-time dependency), and NCCL
// version strings. Absent library: a value saying so, never a crash.
#pragma once
#include <string>

#include "common/result.h"

namespace gpudoctor {

// NCCL's version code: major*10000 + minor*100 + patch (NCCL >= 2.9 encoding), e.g. 22803.
using NcclVersion = int;

// Parses "2.28.3", "2.28", "2.28.3-1", "22803"; Error for anything else.
Result<NcclVersion> parseNcclVersion(const std::string& text);
// "2.28.3".
std::string ncclVersionString(NcclVersion v);

struct InstalledNccl {
  bool found = false;
  NcclVersion version = 0;
  std::string library;  // the file dlopen resolved
  std::string note;     // why not found
};

// dlopen("libnccl.so.2") (or GPUDOCTOR_NCCL_LIBRARY) and ncclGetVersion.
InstalledNccl probeInstalledNccl();

}  // namespace gpudoctor
