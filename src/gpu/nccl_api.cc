#include "gpu/nccl_api.h"

#include <dlfcn.h>

#include <cstdlib>

namespace gpudoctor::nccl {

gpudoctor::Result<const Api*> load() {
  static Api api;
  static std::string error;
  static bool done = false;
  if (!done) {
    done = true;
    const char* env = std::getenv("GPUDOCTOR_NCCL_LIBRARY");
    std::string lib = env && *env ? env : "libnccl.so.2";
    void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
      error = "cannot load NCCL (" + std::string(dlerror()) + "); set GPUDOCTOR_NCCL_LIBRARY to libnccl.so.2's path";
    } else {
      api.library = lib;
      auto sym = [&](auto& fn, const char* name) {
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
        if (!fn && error.empty()) error = lib + " has no " + name;
      };
      sym(api.GetVersion, "ncclGetVersion");
      sym(api.GetUniqueId, "ncclGetUniqueId");
      sym(api.CommInitRank, "ncclCommInitRank");
      sym(api.CommDestroy, "ncclCommDestroy");
      sym(api.GetErrorString, "ncclGetErrorString");
      sym(api.AllReduce, "ncclAllReduce");
      sym(api.AllGather, "ncclAllGather");
      sym(api.ReduceScatter, "ncclReduceScatter");
      sym(api.Broadcast, "ncclBroadcast");
      sym(api.Reduce, "ncclReduce");
      sym(api.Send, "ncclSend");
      sym(api.Recv, "ncclRecv");
      sym(api.GroupStart, "ncclGroupStart");
      sym(api.GroupEnd, "ncclGroupEnd");
    }
  }
  if (!error.empty()) return Error{error};
  return &api;
}

}  // namespace gpudoctor::nccl
