// libgpudoctor-record.so: the recorder `gpudoctor record` injects into every CUDA process of a job
// (CUDA_INJECTION64_PATH; NVTX_INJECTION64_PATH for ranges). It writes the process's GPU timeline
// to one .gdrec file (model/recording.h) from CUPTI's activity API.
//
// Cost by construction: the application's threads only ever meet CUPTI's own activity recording
// (no callbacks of ours on launches), and the buffer hand-off: CUPTI asks for a buffer from a pool
// of 8 MiB buffers (allocated only when the pool is empty) and hands it back full; a background
// thread turns the records into the file's form and returns the buffer. Only the calls that matter
// for the timeline are recorded (launches, copies, syncs, event record/wait, allocations, graph
// capture), not every cudaGetDevice. Detached (`--detached`, before `--delay`, after
// `--duration`), no activity kind is enabled at all.
//
// The library never ends the process and never writes to its stdout/stderr: a problem (no CUPTI,
// CUPTI held by another tool) is written to DIR/<host>-<pid>.error, one line, for `record` to report.
#include <cupti.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <generated_nvtx_meta.h>
#include <nvtx3/nvToolsExtPayload.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <regex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "model/recording.h"

namespace rec = gpudoctor::recording;

namespace {

// ---- CUPTI, loaded with dlopen so that a missing library is one line, not a failed injection ----
struct Cupti {
  void* handle = nullptr;
  std::string path;
  // clang-format off
#define GD_CUPTI_FUNCS(X)                                                                              \
  X(cuptiGetVersion) X(cuptiGetTimestamp) X(cuptiSubscribe) X(cuptiActivityRegisterCallbacks)          \
  X(cuptiActivityEnable) X(cuptiActivityDisable) X(cuptiActivityEnableRuntimeApi)                       \
  X(cuptiActivityEnableDriverApi) X(cuptiActivityGetNextRecord) X(cuptiActivityFlushAll)                \
  X(cuptiActivityGetNumDroppedRecords) X(cuptiGetCallbackName) X(cuptiGetResultString)                  \
  X(cuptiSetThreadIdType) X(cuptiActivitySetAttribute) X(cuptiEnableCallback)
  // clang-format on
#define GD_DECLARE(name) decltype(&::name) name = nullptr;
  GD_CUPTI_FUNCS(GD_DECLARE)
#undef GD_DECLARE
  int (*nvtx_init)(const void*) = nullptr;  // CUPTI's InitializeInjectionNvtx2

  // Loads CUPTI: GPUDOCTOR_CUPTI (a path), then the names the loader finds (our RUNPATH, then
  // LD_LIBRARY_PATH and the system's), then the toolkit's usual places. Returns "" or the problem.
  std::string load() {
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
#define GD_RESOLVE(name)                                         \
  name = reinterpret_cast<decltype(name)>(dlsym(handle, #name)); \
  if (name == nullptr) return std::string(path) + " lacks " #name " (CUPTI older than 12.x?)";
    GD_CUPTI_FUNCS(GD_RESOLVE)
#undef GD_RESOLVE
    nvtx_init = reinterpret_cast<int (*)(const void*)>(dlsym(handle, "InitializeInjectionNvtx2"));
    return {};
  }
};

Cupti g_cupti;

uint64_t cuptiNow() {
  uint64_t t = 0;
  if (g_cupti.cuptiGetTimestamp != nullptr) g_cupti.cuptiGetTimestamp(&t);
  return t;
}

int64_t envInt(const char* a, const char* b = nullptr, const char* c = nullptr, const char* d = nullptr) {
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

// CUPTI names some calls with a version suffix ("cudaLaunchKernel_v7000", "cuMemcpyHtoDAsync_v2"):
// the timeline uses the name the program called.
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

// The calls the timeline needs; everything else (cudaGetDevice, cuCtxGetCurrent, ...) is not
// recorded, which is most of CUPTI's API cost in framework code.
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

// ---- the buffer pool and the writer thread ----
constexpr size_t kBufferBytes = 8u << 20;
constexpr size_t kAlign = 8;

struct Item {
  uint8_t* buffer = nullptr;  // a filled CUPTI buffer, or null for a window record
  size_t valid = 0;
  uint64_t window_start = 0, window_end = 0;
};

class Recorder {
 public:
  std::string init();  // "" or the problem
  void attach();
  void detach();
  void finish();
  void requestBuffer(uint8_t** buf, size_t* size, size_t* max_records);
  void completeBuffer(uint8_t* buf, size_t valid);
  void controlLoop();

  void onNvtx(CUpti_CallbackId cbid, const CUpti_NvtxData* d);
  std::string enableNvtxCallbacks();

  std::atomic<bool> forked_child{false};
  std::atomic<int> toggles{0};  // signals received
  int toggle_signal = 0;

 private:
  void writerLoop();
  void convert(const uint8_t* buf, size_t valid);
  void append(rec::Type t, const void* payload, uint32_t size, const void* tail = nullptr, uint32_t tail_size = 0);
  uint32_t intern(std::string_view s);
  void flushOut();
  void writeNote(const char* ext, const std::string& line);
  void fail(const std::string& line) { writeNote(".error", line); }
  void enableApis(bool on);

  std::string dir_, host_, base_;
  int fd_ = -1;
  std::string out_;
  std::mutex pool_mu_;
  std::vector<uint8_t*> free_;
  size_t allocated_ = 0;
  std::mutex q_mu_;
  std::condition_variable q_cv_;
  std::deque<Item> queue_;
  bool stop_ = false;
  std::thread writer_, control_;
  std::mutex state_mu_;
  std::condition_variable state_cv_;
  bool attached_ = false, finished_ = false, initialized_ = false;
  std::atomic<bool> attached_now_{false};  // attached_, read without the lock by the NVTX callback
  bool late_ = false;                      // attaching after initialization
  bool api_kinds_on_ = false;              // the RUNTIME/DRIVER kinds are on (a late attach)
  uint64_t attach_ns_ = 0;
  int64_t delay_ms_ = 0, duration_ms_ = -1;
  int64_t sample_on_ms_ = -1, sample_every_ms_ = -1;  // --sample ON/EVERY: attached ON of every EVERY ms
  bool start_detached_ = false, all_api_ = false;
  // GPUDOCTOR_RECORD_KEEP_API=1 (an experiment, not the default): the API calls are enabled once at
  // initialization and stay on; attach and detach toggle only the GPU kinds, and the writer keeps
  // the calls that start inside a window. Tests whether re-enabling the API kinds on every late
  // attach is what made CUPTI repeat correlation ids (seen after a third attach, docs/record.md).
  bool keep_api_ = false;
  // --steps N-M: attached from the start of the N-th NVTX range matching the step pattern to the
  // start of the (M+1)-th (counted from 1, in the order they begin, over all threads).
  int64_t steps_first_ = -1, steps_last_ = -1;
  std::string step_pattern_;  // --nvtx-step, else rec::kDefaultStepPattern
  std::regex step_re_;
  std::atomic<int64_t> steps_seen_{0};
  // The range whose start attached the recorder: CUPTI records no marker for the push that turned
  // the marker kind on, only its pop, so the writer pairs the first unpaired end on its thread
  // with it (the innermost range open at the attach is that step's).
  std::mutex first_step_mu_;
  struct FirstStep {
    uint64_t start_ns = 0;
    uint32_t tid = 0;
    std::string name;
    bool pending = false;
  } first_step_;
  void stepRangeBegins(const char* msg);
  // NCCL calls from NCCL's NVTX payloads, queued by the application's threads (a few per step),
  // written by the writer thread.
  std::mutex nccl_mu_;
  std::vector<rec::NcclCall> nccl_calls_;
  void writeNcclCalls();
  std::mutex windows_mu_;
  std::vector<std::pair<uint64_t, uint64_t>> windows_seen_;  // closed windows, and the open one (end UINT64_MAX)
  bool inWindow(uint64_t t) {
    std::lock_guard<std::mutex> l(windows_mu_);
    for (auto it = windows_seen_.rbegin(); it != windows_seen_.rend(); ++it)
      if (t >= it->first && t <= it->second) return true;
    return false;
  }
  CUpti_SubscriberHandle subscriber_ = nullptr;
  // Writer-thread state.
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, uint32_t, Hash, std::equal_to<>> strings_;
  struct ApiName {
    uint32_t id;
    bool launch;
  };
  std::unordered_map<uint64_t, ApiName> api_names_;  // (domain << 32 | cbid) -> its name
  ApiName apiNameOf(rec::ApiDomain d, uint32_t cbid);
  struct OpenRange {
    uint64_t start;
    uint32_t tid, name, domain;
  };
  std::unordered_map<uint32_t, OpenRange> open_ranges_;
  rec::End end_{};
  uint64_t windows_ = 0, attached_ns_ = 0;  // attach windows closed, their summed length
  uint64_t gpu_records_ = 0;                // kernels, copies, memsets: a process without any leaves no file
  std::atomic<uint64_t> buffers_{0};
};

Recorder* g_rec = nullptr;

void CUPTIAPI onBufferRequested(uint8_t** buf, size_t* size, size_t* max_records) {
  g_rec->requestBuffer(buf, size, max_records);
}
void CUPTIAPI onBufferCompleted(CUcontext, uint32_t, uint8_t* buf, size_t, size_t valid) {
  g_rec->completeBuffer(buf, valid);
}
void CUPTIAPI onCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (domain == CUPTI_CB_DOMAIN_NVTX && g_rec != nullptr && data != nullptr)
    g_rec->onNvtx(cbid, static_cast<const CUpti_NvtxData*>(data));
}

void onSignal(int) {
  if (g_rec != nullptr) g_rec->toggles.fetch_add(1, std::memory_order_relaxed);
}

void atForkChild() {
  if (g_rec != nullptr) g_rec->forked_child = true;  // the child never touches the parent's file
}

void atExit() {
  if (g_rec != nullptr && !g_rec->forked_child) g_rec->finish();
}

// GPUDOCTOR_RECORD_CUPTI_ATTRS: CUPTI activity attributes for measuring what they cost, e.g.
// "pinned=1,per_thread=0,device_buffer_mb=64,semaphores=262144" (scripts/record/overhead_matrix.sh);
// by default CUPTI's own settings. Set before the buffer callbacks are registered, as CUPTI asks.
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

// DIR/HOST-PID.EXT holding one line, for `record` to report: .error (nothing recorded because of a
// problem) or .idle (attached, but nothing to record).
void Recorder::writeNote(const char* ext, const std::string& line) {
  std::string p = dir_ + "/" + host_ + "-" + std::to_string(getpid()) + ext;
  FILE* f = std::fopen(p.c_str(), "w");
  if (f != nullptr) {
    std::fprintf(f, "%s\n", line.c_str());
    std::fclose(f);
  }
}

std::string Recorder::init() {
  const char* d = std::getenv("GPUDOCTOR_RECORD_DIR");
  if (d == nullptr || *d == '\0') return "GPUDOCTOR_RECORD_DIR is not set";
  dir_ = d;
  host_ = hostName();
  if (std::string err = g_cupti.load(); !err.empty()) {
    fail(err);
    return err;
  }
  CUptiResult r = g_cupti.cuptiSubscribe(&subscriber_, reinterpret_cast<CUpti_CallbackFunc>(onCallback), nullptr);
  if (r != CUPTI_SUCCESS) {
    const char* s = "?";
    g_cupti.cuptiGetResultString(r, &s);
    std::string line = r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
                           ? "CUPTI is already held by another tool in this process (nsys, ncu, DCGM profiling or the "
                             "PyTorch profiler): nothing recorded"
                           : std::string("CUPTI refused the recorder: ") + s;
    fail(line);
    return line;
  }
  g_cupti.cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  if (std::string err = setCuptiAttributes(); !err.empty()) {
    fail(err);
    return err;
  }
  if (g_cupti.cuptiActivityRegisterCallbacks(onBufferRequested, onBufferCompleted) != CUPTI_SUCCESS) {
    fail("CUPTI refused the activity buffer callbacks");
    return "callbacks";
  }
  int64_t rank = envInt("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID");
  int64_t local = envInt("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID");
  int64_t world = envInt("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS");
  base_ = dir_ + "/" + (rank >= 0 ? "rank" + std::to_string(rank) : std::string("proc")) + "-" + host_ + "-" +
          std::to_string(getpid()) + ".gdrec";
  fd_ = ::open((base_ + ".partial").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    fail("cannot write " + base_ + ".partial: " + std::strerror(errno));
    return "open";
  }
  rec::FileHeader h{};
  std::memcpy(h.magic, rec::kMagic, sizeof h.magic);
  h.version = rec::kVersion;
  h.header_bytes = sizeof h;
  h.pid = getpid();
  h.rank = static_cast<int32_t>(rank);
  h.local_rank = static_cast<int32_t>(local);
  h.world_size = static_cast<int32_t>(world);
  g_cupti.cuptiGetVersion(&h.cupti_version);
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  h.cupti_start_ns = cuptiNow();
  h.realtime_start_ns = static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
  out_.append(reinterpret_cast<const char*>(&h), sizeof h);
  auto info = [&](std::string_view k, std::string_view v) {
    std::string kv(k);
    kv.push_back('\0');
    kv.append(v);
    append(rec::Type::kInfo, kv.data(), static_cast<uint32_t>(kv.size()));
  };
  info("host", host_);
  info("cupti", g_cupti.path);
  if (const char* c = std::getenv("GPUDOCTOR_RECORD_COMMAND")) info("command", c);
  if (const char* c = std::getenv("GPUDOCTOR_RECORD_NVTX_STEP")) info("nvtx_step", c);
  {
    std::string cmdline;
    if (FILE* f = std::fopen("/proc/self/cmdline", "r")) {
      char buf[4096];
      size_t n = std::fread(buf, 1, sizeof buf, f);
      std::fclose(f);
      for (size_t i = 0; i < n; ++i) cmdline.push_back(buf[i] == '\0' ? ' ' : buf[i]);
      while (!cmdline.empty() && cmdline.back() == ' ') cmdline.pop_back();
    }
    info("process", cmdline);
  }
  delay_ms_ = std::max<int64_t>(0, envInt("GPUDOCTOR_RECORD_DELAY_MS"));
  duration_ms_ = envInt("GPUDOCTOR_RECORD_DURATION_MS");
  sample_on_ms_ = envInt("GPUDOCTOR_RECORD_SAMPLE_ON_MS");
  sample_every_ms_ = envInt("GPUDOCTOR_RECORD_SAMPLE_EVERY_MS");
  if (sample_on_ms_ <= 0 || sample_every_ms_ <= sample_on_ms_) sample_on_ms_ = sample_every_ms_ = -1;
  start_detached_ = envInt("GPUDOCTOR_RECORD_DETACHED") == 1;
  all_api_ = envInt("GPUDOCTOR_RECORD_ALL_API") == 1;
  keep_api_ = envInt("GPUDOCTOR_RECORD_KEEP_API") == 1;
  if (keep_api_) enableApis(true);  // at initialization: the per-call path, enabled once
  steps_first_ = envInt("GPUDOCTOR_RECORD_STEPS_FIRST");
  steps_last_ = envInt("GPUDOCTOR_RECORD_STEPS_LAST");
  if (steps_first_ >= 1 && steps_last_ >= steps_first_) {
    const char* pat = std::getenv("GPUDOCTOR_RECORD_NVTX_STEP");
    step_pattern_ = pat != nullptr && *pat != '\0' ? pat : rec::kDefaultStepPattern;
    try {
      step_re_ = std::regex(step_pattern_, std::regex::ECMAScript | std::regex::nosubs | std::regex::optimize);
    } catch (const std::regex_error&) {
      fail("--nvtx-step is not a regular expression");
      return "regex";
    }
    start_detached_ = true;
  } else {
    steps_first_ = steps_last_ = -1;
  }
  if (std::string err = enableNvtxCallbacks(); !err.empty()) {
    fail(err);
    return err;
  }
  toggle_signal = static_cast<int>(envInt("GPUDOCTOR_RECORD_SIGNAL"));
  if (toggle_signal > 0) {
    struct sigaction sa {};
    sa.sa_handler = onSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(toggle_signal, &sa, nullptr);
  }
  initialized_ = true;
  writer_ = std::thread([this] { writerLoop(); });
  // Device records come only when a context is created: always on, so a late attach still knows the GPU.
  g_cupti.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE);
  if (!start_detached_ && delay_ms_ == 0) attach();
  late_ = true;
  control_ = std::thread([this] { controlLoop(); });
  pthread_atfork(nullptr, nullptr, atForkChild);
  std::atexit(atExit);
  return {};
}

// What is recorded, by name (GPUDOCTOR_RECORD_KINDS, comma-separated, for measuring what each
// part costs; runtime/driver are the selected calls, all of them with --all-api). By default all
// but "sync" (CUPTI's synchronization records, the event ids of record/wait pairs: on with
// --sync-events) and "overhead" (CUPTI's own cost records). Measured on an H200 with the PyTorch
// job of scripts/record/torch_job.py (median of 5 runs, interleaved): the default +1.0 % step
// time, with sync and overhead records +28 % (scripts/record/overhead_matrix.sh, docs/record.md).
struct KindName {
  const char* name;
  CUpti_ActivityKind kind;
};
constexpr KindName kKinds[] = {{"kernel", CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL},
                               {"memcpy", CUPTI_ACTIVITY_KIND_MEMCPY},
                               {"memset", CUPTI_ACTIVITY_KIND_MEMSET},
                               {"sync", CUPTI_ACTIVITY_KIND_SYNCHRONIZATION},
                               {"marker", CUPTI_ACTIVITY_KIND_MARKER},
                               {"overhead", CUPTI_ACTIVITY_KIND_OVERHEAD}};

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

// Calls f(cbid, name) for every call of a CUPTI API domain.
template <class F>
void forEachApi(CUpti_CallbackDomain domain, uint32_t count, F f) {
  for (uint32_t cb = 1; cb < count; ++cb) {
    const char* n = nullptr;
    if (g_cupti.cuptiGetCallbackName(domain, cb, &n) == CUPTI_SUCCESS && n != nullptr) f(cb, apiName(n));
  }
}

// At initialization the selected calls are enabled one by one. Attaching later (--delay, a
// signal), CUPTI records no call enabled that way (measured on an H200, CUDA 13.0), so the whole
// API kinds are enabled and the calls not wanted disabled, the documented other order.
void Recorder::enableApis(bool on) {
  const bool runtime = kindWanted("runtime"), driver = kindWanted("driver");
  auto each = [&](auto f) {
    if (runtime)
      forEachApi(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE,
                 [&](uint32_t cb, const std::string& n) { f(cb, n, g_cupti.cuptiActivityEnableRuntimeApi); });
    if (driver)
      forEachApi(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE,
                 [&](uint32_t cb, const std::string& n) { f(cb, n, g_cupti.cuptiActivityEnableDriverApi); });
  };
  if (on && late_) {
    if (runtime) g_cupti.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
    if (driver) g_cupti.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER);
    api_kinds_on_ = true;
    if (!all_api_)
      each([](uint32_t cb, const std::string& n, auto enable) {
        if (!wantedApi(n)) enable(cb, 0);
      });
    return;
  }
  if (!on && api_kinds_on_) {
    g_cupti.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME);
    g_cupti.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER);
    api_kinds_on_ = false;
    return;
  }
  each([&](uint32_t cb, const std::string& n, auto enable) {
    if (all_api_ || wantedApi(n)) enable(cb, on ? 1 : 0);
  });
}

void Recorder::attach() {
  std::lock_guard<std::mutex> l(state_mu_);
  if (attached_ || finished_) return;
  attach_ns_ = cuptiNow();
  if (keep_api_) {
    std::lock_guard<std::mutex> w(windows_mu_);
    windows_seen_.push_back({attach_ns_, UINT64_MAX});
  }
  for (auto k : kKinds)
    if (kindWanted(k.name)) g_cupti.cuptiActivityEnable(k.kind);
  if (!keep_api_) enableApis(true);
  attached_ = true;
  attached_now_.store(true, std::memory_order_release);
}

void Recorder::detach() {
  std::lock_guard<std::mutex> l(state_mu_);
  if (!attached_) return;
  if (!keep_api_) enableApis(false);
  for (auto k : kKinds)
    if (kindWanted(k.name)) g_cupti.cuptiActivityDisable(k.kind);
  g_cupti.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  attached_ = false;
  attached_now_.store(false, std::memory_order_release);
  Item w;
  w.window_start = attach_ns_;
  w.window_end = cuptiNow();
  if (keep_api_) {
    std::lock_guard<std::mutex> l(windows_mu_);
    if (!windows_seen_.empty()) windows_seen_.back().second = w.window_end;
  }
  ++windows_;
  attached_ns_ += w.window_end - w.window_start;
  {
    std::lock_guard<std::mutex> q(q_mu_);
    queue_.push_back(w);
  }
  q_cv_.notify_one();
}

// NVTX callbacks (CUPTI's, on the application's threads): NCCL's range pushes, always (a few per
// step: each carries the call's communicator and bytes), and with --steps the ranges that can be
// steps. Nothing else of NVTX reaches us; ranges themselves come as activity records.
std::string Recorder::enableNvtxCallbacks() {
  std::vector<CUpti_CallbackId> ids = {CUPTI_CBID_NVTX_nvtxDomainRangePushEx};
  if (steps_first_ > 0)
    for (auto id : {CUPTI_CBID_NVTX_nvtxRangePushA, CUPTI_CBID_NVTX_nvtxRangePushEx, CUPTI_CBID_NVTX_nvtxRangeStartA,
                    CUPTI_CBID_NVTX_nvtxRangeStartEx, CUPTI_CBID_NVTX_nvtxDomainRangeStartEx})
      ids.push_back(id);
  for (auto id : ids) {
    CUptiResult r = g_cupti.cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_NVTX, id);
    if (r != CUPTI_SUCCESS) {
      const char* m = "?";
      g_cupti.cuptiGetResultString(r, &m);
      // NCCL's payloads are a bonus; --steps cannot work without them.
      if (steps_first_ > 0) return std::string("CUPTI refused the NVTX callbacks --steps needs: ") + m;
      return {};
    }
  }
  return {};
}

uint32_t systemTid() {
  static thread_local uint32_t tid = static_cast<uint32_t>(::syscall(SYS_gettid));
  return tid;
}

void Recorder::onNvtx(CUpti_CallbackId cbid, const CUpti_NvtxData* d) {
  const void* p = d->functionParams;
  if (p == nullptr) return;
  const nvtxEventAttributes_t* a = nullptr;
  const char* msg = nullptr;
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx:
      a = static_cast<const nvtxDomainRangePushEx_params*>(p)->core.eventAttrib;
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx:
      a = static_cast<const nvtxDomainRangeStartEx_params*>(p)->core.eventAttrib;
      break;
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
      a = static_cast<const nvtxRangePushEx_params*>(p)->eventAttrib;
      break;
    case CUPTI_CBID_NVTX_nvtxRangeStartEx:
      a = static_cast<const nvtxRangeStartEx_params*>(p)->eventAttrib;
      break;
    case CUPTI_CBID_NVTX_nvtxRangePushA:
      msg = static_cast<const nvtxRangePushA_params*>(p)->message;
      break;
    case CUPTI_CBID_NVTX_nvtxRangeStartA:
      msg = static_cast<const nvtxRangeStartA_params*>(p)->message;
      break;
    default:
      return;
  }
  if (a != nullptr && a->payloadType == NVTX_PAYLOAD_TYPE_EXT && a->reserved0 >= 1 && a->payload.ullValue != 0) {
    // NCCL's binary payload: one nvtxPayloadData_t naming a static schema of NCCL's.
    const auto* pd = reinterpret_cast<const nvtxPayloadData_t*>(static_cast<uintptr_t>(a->payload.ullValue));
    const uint64_t sid = pd->schemaId - NVTX_PAYLOAD_SCHEMA_ID_STATIC_START;
    if (pd->schemaId < NVTX_PAYLOAD_SCHEMA_ID_STATIC_START || sid > 64 || pd->payload == nullptr) return;
    rec::NcclCall c{};
    c.schema = static_cast<uint32_t>(sid);
    if (pd->size != rec::ncclPayloadBytes(c.schema)) return;
    const auto* b = static_cast<const uint8_t*>(pd->payload);
    c.arg = c.arg2 = -1;
    if (rec::isNcclCollectiveSchema(c.schema)) {
      if (!attached_now_.load(std::memory_order_acquire)) return;
      std::memcpy(&c.comm, b, 8);
      std::memcpy(&c.bytes, b + 8, 8);
      if (pd->size == 24) std::memcpy(&c.arg, b + 16, 4);
    } else if (rec::isNcclCommSizeSchema(c.schema)) {  // kept detached too: sizes for later windows
      std::memcpy(&c.comm, b, 8);
      std::memcpy(&c.arg, b + 8, 4);
      std::memcpy(&c.arg2, b + 12, 4);
    } else {
      return;
    }
    c.start_ns = cuptiNow();
    c.tid = systemTid();
    std::lock_guard<std::mutex> l(nccl_mu_);
    nccl_calls_.push_back(c);
    return;
  }
  if (steps_first_ <= 0) return;
  if (a != nullptr && a->messageType == NVTX_MESSAGE_TYPE_ASCII) msg = a->message.ascii;
  if (msg != nullptr) stepRangeBegins(msg);
}

// --steps N-M: the k-th step range begins (k from 1): attach at N, detach at M + 1.
void Recorder::stepRangeBegins(const char* msg) {
  if (!std::regex_search(msg, step_re_)) return;
  int64_t k = steps_seen_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (k == steps_first_) {
    {
      std::lock_guard<std::mutex> l(first_step_mu_);
      first_step_ = {cuptiNow(), systemTid(), msg, true};
    }
    attach();
  } else if (k == steps_last_ + 1)
    detach();
}

void Recorder::writeNcclCalls() {
  std::vector<rec::NcclCall> calls;
  {
    std::lock_guard<std::mutex> l(nccl_mu_);
    calls.swap(nccl_calls_);
  }
  for (const auto& c : calls) append(rec::Type::kNcclCall, &c, sizeof c);
}

// Attach after --delay, detach after --duration, toggle on the signal.
void Recorder::controlLoop() {
  auto t0 = std::chrono::steady_clock::now();
  bool delayed = start_detached_ || delay_ms_ == 0;
  bool timed_out = false;
  int seen = 0;
  std::unique_lock<std::mutex> l(state_mu_);
  while (!finished_) {
    state_cv_.wait_for(l, std::chrono::milliseconds(20));
    if (finished_) break;
    l.unlock();
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
    if (!delayed && ms >= delay_ms_) {
      delayed = true;
      attach();
    }
    if (!timed_out && duration_ms_ >= 0 && delayed && ms >= delay_ms_ + duration_ms_) {
      timed_out = true;
      detach();
    }
    if (sample_every_ms_ > 0 && delayed && !timed_out) {
      // Sampling: attached during the first ON ms of every EVERY ms after the delay.
      bool want = (ms - delay_ms_) % sample_every_ms_ < sample_on_ms_;
      bool on;
      {
        std::lock_guard<std::mutex> s(state_mu_);
        on = attached_;
      }
      if (want && !on)
        attach();
      else if (!want && on)
        detach();
    }
    int t = toggles.load(std::memory_order_relaxed);
    for (; seen < t; ++seen) {
      bool on;
      {
        std::lock_guard<std::mutex> s(state_mu_);
        on = attached_;
      }
      if (on)
        detach();
      else
        attach();
    }
    l.lock();
  }
}

void Recorder::requestBuffer(uint8_t** buf, size_t* size, size_t* max_records) {
  uint8_t* b = nullptr;
  {
    std::lock_guard<std::mutex> l(pool_mu_);
    if (!free_.empty()) {
      b = free_.back();
      free_.pop_back();
    } else {
      b = static_cast<uint8_t*>(std::aligned_alloc(kAlign, kBufferBytes));
      if (b != nullptr) ++allocated_;
    }
  }
  *buf = b;
  *size = b != nullptr ? kBufferBytes : 0;
  *max_records = 0;
}

void Recorder::completeBuffer(uint8_t* buf, size_t valid) {
  if (buf == nullptr) return;
  buffers_.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> l(q_mu_);
    Item it;
    it.buffer = buf;
    it.valid = valid;
    queue_.push_back(it);
  }
  q_cv_.notify_one();
}

void Recorder::writerLoop() {
  for (;;) {
    Item it;
    {
      std::unique_lock<std::mutex> l(q_mu_);
      q_cv_.wait(l, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) break;  // stop_ and drained
      it = queue_.front();
      queue_.pop_front();
    }
    if (it.buffer != nullptr) {
      convert(it.buffer, it.valid);
      std::lock_guard<std::mutex> l(pool_mu_);
      free_.push_back(it.buffer);
    } else {
      rec::Window w{it.window_start, it.window_end};
      append(rec::Type::kWindow, &w, sizeof w);
    }
    writeNcclCalls();
    if (out_.size() > (4u << 20)) flushOut();
  }
}

void Recorder::flushOut() {
  size_t off = 0;
  while (off < out_.size()) {
    ssize_t n = ::write(fd_, out_.data() + off, out_.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // disk full: the file is left .partial and record reports it
    off += static_cast<size_t>(n);
  }
  out_.clear();
}

void Recorder::append(rec::Type t, const void* payload, uint32_t size, const void* tail, uint32_t tail_size) {
  rec::RecordHeader h{static_cast<uint16_t>(t), 0, size + tail_size};
  out_.append(reinterpret_cast<const char*>(&h), sizeof h);
  out_.append(static_cast<const char*>(payload), size);
  if (tail_size != 0) out_.append(static_cast<const char*>(tail), tail_size);
  ++end_.records;
}

uint32_t Recorder::intern(std::string_view s) {
  if (s.empty()) return 0;
  if (auto it = strings_.find(s); it != strings_.end()) return it->second;  // no allocation for a known name
  uint32_t id = static_cast<uint32_t>(strings_.size() + 1);
  strings_.emplace(std::string(s), id);
  append(rec::Type::kString, &id, sizeof id, s.data(), static_cast<uint32_t>(s.size()));
  return id;
}

Recorder::ApiName Recorder::apiNameOf(rec::ApiDomain d, uint32_t cbid) {
  uint64_t key = (static_cast<uint64_t>(d) << 32) | cbid;
  auto it = api_names_.find(key);
  if (it != api_names_.end()) return it->second;
  const char* n = nullptr;
  g_cupti.cuptiGetCallbackName(d == rec::ApiDomain::kRuntime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API,
                               cbid, &n);
  std::string name = apiName(n);
  ApiName a{intern(name), rec::isLaunchCall(name)};
  api_names_.emplace(key, a);
  return a;
}

// The fields memcpy and memset records share.
template <class M>
rec::Copy copyOf(const M* m) {
  rec::Copy o{};
  o.start_ns = m->start;
  o.end_ns = m->end;
  o.bytes = m->bytes;
  o.correlation = m->correlationId;
  o.device = m->deviceId;
  o.stream = m->streamId;
  o.graph_id = m->graphId;
  return o;
}

void Recorder::convert(const uint8_t* buf, size_t valid) {
  CUpti_Activity* r = nullptr;
  while (g_cupti.cuptiActivityGetNextRecord(const_cast<uint8_t*>(buf), valid, &r) == CUPTI_SUCCESS) {
    switch (r->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(r);
        rec::Kernel o{};
        o.start_ns = k->start;
        o.end_ns = k->end;
        o.correlation = k->correlationId;
        o.device = k->deviceId;
        o.stream = k->streamId;
        o.name = intern(k->name != nullptr ? k->name : "?");
        o.grid[0] = k->gridX;
        o.grid[1] = k->gridY;
        o.grid[2] = k->gridZ;
        o.block[0] = k->blockX;
        o.block[1] = k->blockY;
        o.block[2] = k->blockZ;
        o.registers = k->registersPerThread;
        o.static_smem = static_cast<uint32_t>(k->staticSharedMemory);
        o.dynamic_smem = static_cast<uint32_t>(k->dynamicSharedMemory);
        o.graph_id = k->graphId;
        o.graph_node_id = k->graphNodeId;
        append(rec::Type::kKernel, &o, sizeof o);
        ++end_.kernels;
        ++gpu_records_;
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(r);
        rec::Copy o = copyOf(m);
        o.copy_kind = m->copyKind;
        o.src_kind = m->srcKind;
        o.dst_kind = m->dstKind;
        append(rec::Type::kCopy, &o, sizeof o);
        ++gpu_records_;
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(r);
        rec::Copy o = copyOf(m);
        o.src_kind = static_cast<uint8_t>(m->memoryKind);
        o.is_memset = 1;
        append(rec::Type::kCopy, &o, sizeof o);
        ++gpu_records_;
        break;
      }
      case CUPTI_ACTIVITY_KIND_RUNTIME:
      case CUPTI_ACTIVITY_KIND_DRIVER: {
        auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(r);
        if (keep_api_ && !inWindow(a->start)) break;  // a call made while detached
        rec::Api o{};
        o.start_ns = a->start;
        o.end_ns = a->end;
        o.correlation = a->correlationId;
        o.tid = a->threadId;
        o.cbid = a->cbid;
        o.domain = static_cast<uint8_t>(r->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? rec::ApiDomain::kRuntime
                                                                               : rec::ApiDomain::kDriver);
        ApiName an = apiNameOf(static_cast<rec::ApiDomain>(o.domain), a->cbid);
        o.name = an.id;
        append(rec::Type::kApi, &o, sizeof o);
        if (an.launch) ++end_.launch_calls;
        break;
      }
      case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
        auto* s = reinterpret_cast<const CUpti_ActivitySynchronization2*>(r);
        rec::Sync o{};
        o.start_ns = s->start;
        o.end_ns = s->end;
        o.correlation = s->correlationId;
        o.type = static_cast<uint32_t>(s->type);
        o.stream = s->streamId;
        o.event = s->cudaEventId;
        append(rec::Type::kSync, &o, sizeof o);
        break;
      }
      case CUPTI_ACTIVITY_KIND_MARKER: {
        auto* m = reinterpret_cast<const CUpti_ActivityMarker2*>(r);
        uint32_t tid = m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? m->objectId.pt.threadId : 0;
        if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
          open_ranges_[m->id] = {m->timestamp, tid, intern(m->name != nullptr ? m->name : ""),
                                 intern(m->domain != nullptr ? m->domain : "")};
        } else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
          auto it = open_ranges_.find(m->id);
          if (it == open_ranges_.end()) {
            std::lock_guard<std::mutex> l(first_step_mu_);
            if (first_step_.pending && first_step_.tid == tid && m->timestamp >= first_step_.start_ns) {
              rec::Range o{first_step_.start_ns, m->timestamp, tid, intern(first_step_.name), 0, 0};
              append(rec::Type::kRange, &o, sizeof o);
              first_step_.pending = false;
            }
          } else {
            rec::Range o{it->second.start, m->timestamp, it->second.tid, it->second.name, it->second.domain, 0};
            append(rec::Type::kRange, &o, sizeof o);
            open_ranges_.erase(it);
          }
        }
        break;
      }
      case CUPTI_ACTIVITY_KIND_OVERHEAD: {
        auto* o3 = reinterpret_cast<const CUpti_ActivityOverhead3*>(r);
        rec::Overhead o{o3->start, o3->end, static_cast<uint32_t>(o3->overheadKind), 0};
        append(rec::Type::kOverhead, &o, sizeof o);
        break;
      }
      case CUPTI_ACTIVITY_KIND_DEVICE: {
        auto* d = reinterpret_cast<const CUpti_ActivityDevice5*>(r);
        rec::Device o{};
        o.id = d->id;
        o.sms = d->numMultiprocessors;
        o.cc_major = d->computeCapabilityMajor;
        o.cc_minor = d->computeCapabilityMinor;
        o.global_memory_bytes = d->globalMemorySize;
        o.name = intern(d->name != nullptr ? d->name : "");
        append(rec::Type::kDevice, &o, sizeof o);
        break;
      }
      default:
        break;
    }
  }
}

void Recorder::finish() {
  if (!initialized_) return;
  {
    std::lock_guard<std::mutex> l(state_mu_);
    if (finished_) return;
  }
  detach();  // flushes CUPTI's buffers into the queue and queues the last window
  g_cupti.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  {
    std::lock_guard<std::mutex> l(state_mu_);
    finished_ = true;
  }
  state_cv_.notify_all();
  if (control_.joinable()) control_.join();
  {
    std::lock_guard<std::mutex> l(q_mu_);
    stop_ = true;
  }
  q_cv_.notify_one();
  if (writer_.joinable()) writer_.join();
  writeNcclCalls();
  size_t dropped = 0;
  g_cupti.cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped);
  end_.dropped = dropped;
  end_.buffers = buffers_.load();
  end_.buffer_bytes = allocated_ * kBufferBytes;
  end_.unpaired_ranges = open_ranges_.size();
  end_.end_ns = cuptiNow();
  rec::End e = end_;
  append(rec::Type::kEnd, &e, sizeof e);
  flushOut();
  bool ok = ::fsync(fd_) == 0 || errno == EINVAL;
  ::close(fd_);
  // A process that ran no GPU work (torchrun's agent, a launcher that only counted devices) leaves
  // nothing: its file would be a rank without GPU activity.
  if (gpu_records_ == 0) {
    std::remove((base_ + ".partial").c_str());
    // Attached but no GPU work ran in the windows (a --delay that ended before the job's first
    // kernel, a window during start-up): record says so instead of "no process used CUDA".
    char line[512];
    if (steps_first_ > 0 && windows_ == 0) {
      long long seen = static_cast<long long>(steps_seen_.load());
      std::snprintf(line, sizeof line,
                    "%lld NVTX range%s matched %s, and --steps began at %lld (steps are the job's NVTX ranges: "
                    "torch.cuda.nvtx.range_push / nvtxRangePushA around each step, named by --nvtx-step)",
                    seen, seen == 1 ? "" : "s", step_pattern_.c_str(), static_cast<long long>(steps_first_));
      writeNote(".idle", line);
    } else if (windows_ != 0 && (delay_ms_ > 0 || sample_every_ms_ > 0 || toggle_signal > 0 || start_detached_)) {
      std::snprintf(line, sizeof line,
                    "attached %.1f s in %llu window%s, and no GPU work ran in %s (--delay counts from the process's "
                    "first CUDA call)",
                    static_cast<double>(attached_ns_) / 1e9, static_cast<unsigned long long>(windows_),
                    windows_ == 1 ? "" : "s", windows_ == 1 ? "it" : "them");
      writeNote(".idle", line);
    }
  } else if (ok)
    std::rename((base_ + ".partial").c_str(), base_.c_str());
}

Recorder& recorder() {
  static Recorder* r = new Recorder();  // never destroyed: atexit handlers of other libraries may still run CUDA
  g_rec = r;
  return *r;
}

}  // namespace

// The CUDA driver calls this once, at cuInit, when CUDA_INJECTION64_PATH names this library.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  static std::once_flag once;
  static int result = 0;
  std::call_once(once, [] { result = recorder().init().empty() ? 1 : 0; });
  return result;
}

// NVTX calls this when NVTX_INJECTION64_PATH names this library: CUPTI's own NVTX handler is
// installed, so that ranges arrive as CUPTI_ACTIVITY_KIND_MARKER records.
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(const void* get_export_table) {
  if (!g_cupti.load().empty() || g_cupti.nvtx_init == nullptr) return 0;
  return g_cupti.nvtx_init(get_export_table);
}
