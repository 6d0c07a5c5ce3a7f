#include "gpu/recorder/config.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace gpudoctor::recorder {

int64_t envInt(const char* a, const char* b, const char* c, const char* d) {
  for (const char* n : {a, b, c, d}) {
    if (n == nullptr) continue;
    const char* v = std::getenv(n);
    if (v == nullptr || *v == '\0') continue;
    char* end = nullptr;
    long long x = std::strtoll(v, &end, 10);
    if (end != v && *end == '\0') return x;
  }
  return -1;
}

std::string hostName() {
  char h[256] = {0};
  if (gethostname(h, sizeof h - 1) != 0) return "host";
  for (char* p = h; *p != '\0'; ++p)
    if (*p == '/' || *p == ' ') *p = '_';
  return h;
}

std::string apiName(const char* raw) {
  std::string s = raw != nullptr ? raw : "?";
  for (std::string_view suf : {"_ptsz", "_ptds"}) {
    if (s.size() > suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0)
      s.resize(s.size() - suf.size());
  }
  size_t v = s.rfind("_v");
  if (v != std::string::npos && v + 2 < s.size() && s.find_first_not_of("0123456789", v + 2) == std::string::npos)
    s.resize(v);
  return s;
}

bool wantedApi(std::string_view n) {
  static constexpr std::string_view kPrefixes[] = {"cudaLaunch",
                                                   "cudaGraphLaunch",
                                                   "cudaMemcpy",
                                                   "cudaMemset",
                                                   "cudaMalloc",
                                                   "cudaFree",
                                                   "cudaHostAlloc",
                                                   "cudaHostRegister",
                                                   "cudaStreamSynchronize",
                                                   "cudaDeviceSynchronize",
                                                   "cudaEventSynchronize",
                                                   "cudaStreamWaitEvent",
                                                   "cudaEventRecord",
                                                   "cudaStreamQuery",
                                                   "cudaEventQuery",
                                                   "cudaStreamBeginCapture",
                                                   "cudaStreamEndCapture",
                                                   "cudaGraphInstantiate",
                                                   "cudaMemPrefetch",
                                                   "cuLaunch",
                                                   "cuGraphLaunch",
                                                   "cuMemcpy",
                                                   "cuMemset",
                                                   "cuStreamSynchronize",
                                                   "cuCtxSynchronize",
                                                   "cuEventSynchronize",
                                                   "cuStreamWaitEvent",
                                                   "cuEventRecord",
                                                   "cuMemAlloc",
                                                   "cuMemFree",
                                                   "cuMemHostAlloc",
                                                   "cuStreamBeginCapture",
                                                   "cuStreamEndCapture",
                                                   "cuGraphInstantiate",
                                                   "cuModuleLoad",
                                                   "cuLibraryLoad",
                                                   "cuStreamQuery",
                                                   "cuEventQuery"};
  for (auto p : kPrefixes)
    if (n.substr(0, p.size()) == p) return true;
  return false;
}

bool kindWanted(const char* name) {
  const char* v = std::getenv("GPUDOCTOR_RECORD_KINDS");
  if (v == nullptr || *v == '\0') {
    std::string_view n = name;
    if (n == "sync") return envInt("GPUDOCTOR_RECORD_SYNC") == 1;
    return n != "overhead";
  }
  std::string list = std::string(",") + v + ",";
  return list.find(std::string(",") + name + ",") != std::string::npos;
}

}  // namespace gpudoctor::recorder
