#include "cli/mpi_world.h"

#include <dlfcn.h>
#include <unistd.h>

#include <filesystem>

namespace gpudoctor::cli {

namespace {

// libgpudoctor-mpi.so's functions (cli/mpi_shim.cc), once loaded.
struct MpiShim {
  int (*init)(int*, int*) = nullptr;
  void (*gather)(const char*, long long, char* (*)(void*, int, long long), void*) = nullptr;
  long long (*max)(long long) = nullptr;
  int (*broadcast)(int) = nullptr;
  void (*finalize)() = nullptr;
};
MpiShim g_mpi;
int g_rank = 0;

#ifdef GPUDOCTOR_HAVE_MPI
// Beside the binary (the build folder), or in ../lib (an install); `why` says what failed.
void* openShim(std::string& why) {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
  for (const auto& p : {exe / "libgpudoctor-mpi.so", exe / "../lib/libgpudoctor-mpi.so"}) {
    if (!std::filesystem::exists(p, ec)) continue;
    if (void* h = ::dlopen(p.c_str(), RTLD_NOW | RTLD_GLOBAL)) return h;
    const char* e = ::dlerror();
    why = "cannot load " + p.lexically_normal().string() + ": " + (e ? e : "dlopen failed") +
          " (Open MPI's runtime: apt install openmpi-bin)";
    return nullptr;
  }
  why = "libgpudoctor-mpi.so is not beside " + (exe / "gpudoctor").string() +
        " (copy it from the build folder with the binary)";
  return nullptr;
}
#endif

}  // namespace

Result<MpiWorld> mpiInit() {
#ifndef GPUDOCTOR_HAVE_MPI
  return Error{"--mpi: this gpudoctor was built without MPI (install libopenmpi-dev and openmpi-bin, then rebuild)"};
#else
  if (!g_mpi.init) {
    std::string why;
    void* h = openShim(why);
    if (!h) return Error{"--mpi: " + why};
    MpiShim s;
    s.init = reinterpret_cast<int (*)(int*, int*)>(::dlsym(h, "gpudoctor_mpi_init"));
    s.gather = reinterpret_cast<decltype(s.gather)>(::dlsym(h, "gpudoctor_mpi_gather"));
    s.max = reinterpret_cast<long long (*)(long long)>(::dlsym(h, "gpudoctor_mpi_max"));
    s.broadcast = reinterpret_cast<int (*)(int)>(::dlsym(h, "gpudoctor_mpi_broadcast"));
    s.finalize = reinterpret_cast<void (*)()>(::dlsym(h, "gpudoctor_mpi_finalize"));
    if (!s.init || !s.gather || !s.max || !s.broadcast || !s.finalize)
      return Error{"--mpi: libgpudoctor-mpi.so is not this gpudoctor's (a function is missing)"};
    g_mpi = s;
  }
  MpiWorld w;
  if (g_mpi.init(&w.rank, &w.size) != 0) return Error{"--mpi: MPI_Init failed"};
  g_rank = w.rank;
  return w;
#endif
}

std::vector<std::string> mpiGather(const std::string& mine) {
  if (!g_mpi.gather) return {mine};
  std::vector<std::string> out{mine};
  auto alloc = [](void* ctx, int proc, long long n) -> char* {
    auto& v = *static_cast<std::vector<std::string>*>(ctx);
    if (v.size() <= static_cast<size_t>(proc)) v.resize(static_cast<size_t>(proc) + 1);
    v[static_cast<size_t>(proc)].resize(static_cast<size_t>(n));
    return v[static_cast<size_t>(proc)].data();
  };
  g_mpi.gather(mine.data(), static_cast<long long>(mine.size()), alloc, &out);
  if (g_rank != 0) out.clear();  // every process's text on process 0 only
  return out;
}

int64_t mpiMax(int64_t v) { return g_mpi.max ? g_mpi.max(v) : v; }
int mpiBroadcast(int v) { return g_mpi.broadcast ? g_mpi.broadcast(v) : v; }
void mpiFinalize() {
  if (g_mpi.finalize) g_mpi.finalize();
}

}  // namespace gpudoctor::cli
