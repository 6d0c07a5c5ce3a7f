#include "probes/cuda/cuda_runtime_probe.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace gpudoctor {

Result<CudaDriverInfo> probeCudaDriver() {
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr)
    return Error{"no NVIDIA driver on this machine (libcuda.so.1 not found): record runs on a GPU machine"};
  using InitFn = int (*)(unsigned);
  using CountFn = int (*)(int*);
  auto init = reinterpret_cast<InitFn>(dlsym(h, "cuInit"));
  auto count = reinterpret_cast<CountFn>(dlsym(h, "cuDeviceGetCount"));
  auto version = reinterpret_cast<CountFn>(dlsym(h, "cuDriverGetVersion"));
  if (init == nullptr || count == nullptr)
    return Error{"libcuda.so.1 lacks cuInit/cuDeviceGetCount: not an NVIDIA driver"};
  CudaDriverInfo info;
  if (version != nullptr) version(&info.driver_version);
  int rc = init(0);
  if (rc == 100)
    return Error{"the NVIDIA driver sees no GPU (cuInit: CUDA_ERROR_NO_DEVICE; check CUDA_VISIBLE_DEVICES)"};
  if (rc != 0) return Error{"the NVIDIA driver failed to start (cuInit error " + std::to_string(rc) + ")"};
  if (count(&info.devices) != 0 || info.devices == 0) return Error{"the NVIDIA driver sees no GPU"};
  return info;  // the handle stays loaded: the process is about to start a job, not to run CUDA itself
}

Result<std::string> findCupti(const std::string& beside_dir) {
  std::vector<std::string> tries;
  if (const char* p = std::getenv("GPUDOCTOR_CUPTI"); p != nullptr && *p != '\0') tries.emplace_back(p);
  if (!beside_dir.empty()) tries.push_back(beside_dir + "/libcupti.so.13");
  for (const char* n :
       {"libcupti.so.13", "libcupti.so.12", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
        "/usr/local/cuda/lib64/libcupti.so.13", "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13",
        "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.12", "/usr/local/cuda/lib64/libcupti.so.12"})
    tries.emplace_back(n);
  std::string listed;
  for (const auto& t : tries) {
    void* h = dlopen(t.c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (h == nullptr) {
      listed += (listed.empty() ? "" : ", ") + t;
      continue;
    }
    link_map* lm = nullptr;
    std::string path = t;
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm != nullptr && lm->l_name != nullptr && lm->l_name[0] == '/')
      path = lm->l_name;
    return path;  // left loaded: unloading CUPTI is not supported
  }
  return Error{"no CUPTI library found (tried " + listed +
               "): install the CUDA toolkit's CUPTI or set GPUDOCTOR_CUPTI"};
}

Result<std::string> findRecorderLibrary() {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  const std::string d = ec ? std::string(".") : exe.parent_path().string();
  for (const std::string& c : {d + "/libgpudoctor-record.so", d + "/../lib/libgpudoctor-record.so"})
    if (fs::exists(c)) return fs::canonical(c).string();
  return Error{"libgpudoctor-record.so not found beside " + d +
               "/gpudoctor (this build has no CUDA toolkit, or the "
               "library was not copied with the binary; give it with --lib)"};
}

}  // namespace gpudoctor
