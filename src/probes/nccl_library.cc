#include "probes/nccl_library.h"

#include <dlfcn.h>
#include <link.h>

#include <fmt/format.h>
#include <cstdlib>

#include "common/exact_time.h"

namespace gpudoctor {

InstalledNccl probeInstalledNccl() {
  InstalledNccl r;
  const char* env = std::getenv("GPUDOCTOR_NCCL_LIBRARY");
  std::string lib = env && *env ? env : "libnccl.so.2";
  void* h = dlopen(lib.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (!h) {
    r.note = std::string("no NCCL library (") + dlerror() + ")";
    return r;
  }
  using GetVersion = int (*)(int*);
  auto fn = reinterpret_cast<GetVersion>(dlsym(h, "ncclGetVersion"));
  int v = 0;
  if (!fn || fn(&v) != 0) {
    r.note = lib + " has no working ncclGetVersion";
    dlclose(h);
    return r;
  }
  link_map* lm = nullptr;
  if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name)
    r.library = lm->l_name;
  else
    r.library = lib;
  // NCCL < 2.9 encoded versions as major*1000 + minor*100 + patch.
  r.version = v < 10000 ? (v / 1000) * 10000 + ((v / 100) % 10) * 100 + v % 100 : v;
  r.found = true;
  dlclose(h);
  return r;
}

}  // namespace gpudoctor
