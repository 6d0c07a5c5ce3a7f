// The recorder's initialization, its end, and the entry points the CUDA driver and NVTX call
// (recorder.h says what the library does).
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <regex>
#include <string>
#include <string_view>
#include <thread>

#include "gpu/recorder/config.h"
#include "gpu/recorder/cupti_api.h"
#include "gpu/recorder/recorder.h"

namespace gpudoctor::recorder {

Recorder* g_rec = nullptr;

namespace {

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

}  // namespace

// The file's header and its info records (host, CUPTI, command, process).
void Recorder::writeHeader(int64_t rank, int64_t local, int64_t world) {
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
  writeHeader(rank, local, world);
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

namespace {

Recorder& theRecorder() {
  static Recorder* r = new Recorder();  // never destroyed: atexit handlers of other libraries may still run CUDA
  g_rec = r;
  return *r;
}

}  // namespace

}  // namespace gpudoctor::recorder

// The CUDA driver calls this once, at cuInit, when CUDA_INJECTION64_PATH names this library.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  static std::once_flag once;
  static int result = 0;
  std::call_once(once, [] { result = gpudoctor::recorder::theRecorder().init().empty() ? 1 : 0; });
  return result;
}

// NVTX calls this when NVTX_INJECTION64_PATH names this library: CUPTI's own NVTX handler is
// installed, so that ranges arrive as CUPTI_ACTIVITY_KIND_MARKER records.
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(const void* get_export_table) {
  using gpudoctor::recorder::g_cupti;
  if (!g_cupti.load().empty() || g_cupti.nvtx_init == nullptr) return 0;
  return g_cupti.nvtx_init(get_export_table);
}
