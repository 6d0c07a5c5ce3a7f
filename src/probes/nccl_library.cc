#include "probes/nccl_library.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <fmt/format.h>

#include "common/exact_time.h"

namespace gpudoctor {

Result<NcclVersion> parseNcclVersion(const std::string& text) {
  auto bad = Error{"cannot read NCCL version \"" + text + "\" (expected e.g. 2.28.3)"};
  std::string t = text;
  if (auto dash = t.find('-'); dash != std::string::npos) t = t.substr(0, dash);
  if (t.find('.') == std::string::npos) {
    auto code = parseInt64(t);
    if (!code || *code < 20000 || *code > 999999) return bad;
    return static_cast<NcclVersion>(*code);
  }
  int parts[3] = {0, 0, 0};
  size_t p = 0;
  for (int i = 0; i < 3 && p <= t.size(); ++i) {
    size_t dot = t.find('.', p);
    std::string part = t.substr(p, dot == std::string::npos ? std::string::npos : dot - p);
    auto v = parseInt64(part);
    if (!v || *v < 0 || *v > 99) return bad;
    parts[i] = static_cast<int>(*v);
    if (dot == std::string::npos) {
      p = t.size() + 1;
      break;
    }
    p = dot + 1;
    if (i == 2) return bad;  // a fourth component
  }
  if (parts[0] != 2) return bad;
  return parts[0] * 10000 + parts[1] * 100 + parts[2];
}

std::string ncclVersionString(NcclVersion v) { return fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100); }

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
  if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name) r.library = lm->l_name;
  else r.library = lib;
  // NCCL < 2.9 encoded versions as major*1000 + minor*100 + patch.
  r.version = v < 10000 ? (v / 1000) * 10000 + ((v / 100) % 10) * 100 + v % 100 : v;
  r.found = true;
  dlclose(h);
  return r;
}

}  // namespace gpudoctor
