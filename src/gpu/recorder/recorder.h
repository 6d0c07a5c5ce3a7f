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
//
// The class's parts, one file each: recorder.cc (initialization, the file's header, the end, the
// entry points), control.cc (attach, detach and the control loop), nvtx.cc (NCCL's payloads and the
// step ranges from NVTX callbacks), writer.cc (the buffer pool, the writer thread, the file's
// records), convert.cc (CUPTI's records into the file's form).
#pragma once
#include <cupti.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <regex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/recording.h"

namespace gpudoctor::recorder {

namespace rec = gpudoctor::recording;

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
  void writeHeader(int64_t rank, int64_t local, int64_t world);
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

// The one recorder of the process (CUPTI's callbacks reach it through this).
extern Recorder* g_rec;

}  // namespace gpudoctor::recorder
