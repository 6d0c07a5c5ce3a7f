#include "gpu/recorder/cupti_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace gpudoctor::recorder {

std::string Cupti::load() {
  if (handle != nullptr) return {};
  std::vector<std::string> tries;
  if (const char* p = std::getenv("GPUDOCTOR_CUPTI"); p != nullptr && *p != '\0') tries.emplace_back(p);
  for (const char* n :
       {"libcupti.so.13", "libcupti.so.12", "libcupti.so", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
        "/usr/local/cuda/lib64/libcupti.so", "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so"})
    tries.emplace_back(n);
  for (const auto& t : tries) {
    handle = dlopen(t.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (handle != nullptr) {
      path = t;
      break;
    }
  }
  if (handle == nullptr) return "CUPTI (libcupti.so) not found: set GPUDOCTOR_CUPTI to its path";
    // The argument is a member's name (assigned, stringized): it cannot take parentheses.
    // NOLINTBEGIN(bugprone-macro-parentheses)
#define GD_RESOLVE(name)                                         \
  name = reinterpret_cast<decltype(name)>(dlsym(handle, #name)); \
  if (name == nullptr) return std::string(path) + " lacks " #name " (CUPTI older than 12.x?)";
  GD_CUPTI_FUNCS(GD_RESOLVE)
  // NOLINTEND(bugprone-macro-parentheses)
#undef GD_RESOLVE
  nvtx_init = reinterpret_cast<int (*)(const void*)>(dlsym(handle, "InitializeInjectionNvtx2"));
  return {};
}

Cupti g_cupti;

uint64_t cuptiNow() {
  uint64_t t = 0;
  if (g_cupti.cuptiGetTimestamp != nullptr) g_cupti.cuptiGetTimestamp(&t);
  return t;
}

std::string setCuptiAttributes() {
  const char* v = std::getenv("GPUDOCTOR_RECORD_CUPTI_ATTRS");
  if (v == nullptr || *v == '\0') return {};
  std::string list = v;
  size_t pos = 0;
  while (pos < list.size()) {
    size_t comma = list.find(',', pos);
    std::string item = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? list.size() : comma + 1;
    size_t eq = item.find('=');
    if (eq == std::string::npos) return "GPUDOCTOR_RECORD_CUPTI_ATTRS: \"" + item + "\" is not NAME=VALUE";
    std::string name = item.substr(0, eq);
    char* end = nullptr;
    unsigned long long x = std::strtoull(item.c_str() + eq + 1, &end, 10);
    if (end == item.c_str() + eq + 1 || *end != '\0') return "GPUDOCTOR_RECORD_CUPTI_ATTRS: " + item + ": not a number";
    CUptiResult r = CUPTI_SUCCESS;
    if (name == "pinned" || name == "per_thread") {
      uint8_t b = x != 0;
      size_t n = sizeof b;
      r = g_cupti.cuptiActivitySetAttribute(name == "pinned" ? CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED
                                                             : CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER,
                                            &n, &b);
    } else if (name == "device_buffer_mb" || name == "semaphores" || name == "device_buffers") {
      size_t val = name == "device_buffer_mb" ? static_cast<size_t>(x) << 20 : static_cast<size_t>(x);
      size_t n = sizeof val;
      r = g_cupti.cuptiActivitySetAttribute(name == "device_buffer_mb" ? CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE
                                            : name == "semaphores"
                                                ? CUPTI_ACTIVITY_ATTR_PROFILING_SEMAPHORE_POOL_SIZE
                                                : CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE,
                                            &n, &val);
    } else {
      return "GPUDOCTOR_RECORD_CUPTI_ATTRS: unknown attribute " + name +
             " (pinned, per_thread, device_buffer_mb, device_buffers, semaphores)";
    }
    if (r != CUPTI_SUCCESS) {
      const char* m = "?";
      g_cupti.cuptiGetResultString(r, &m);
      return "CUPTI refused the attribute " + item + ": " + m;
    }
  }
  return {};
}

}  // namespace gpudoctor::recorder
