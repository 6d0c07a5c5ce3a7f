// Attaching and detaching (the activity kinds and API calls on and off) and the control loop that
// does it after --delay, --duration, --sample and on the toggle signal.
#include <chrono>
#include <mutex>
#include <string>

#include "gpu/recorder/config.h"
#include "gpu/recorder/cupti_api.h"
#include "gpu/recorder/recorder.h"

namespace gpudoctor::recorder {

namespace {

// Calls f(cbid, name) for every call of a CUPTI API domain.
template <class F>
void forEachApi(CUpti_CallbackDomain domain, uint32_t count, F f) {
  for (uint32_t cb = 1; cb < count; ++cb) {
    const char* n = nullptr;
    if (g_cupti.cuptiGetCallbackName(domain, cb, &n) == CUPTI_SUCCESS && n != nullptr) f(cb, apiName(n));
  }
}

}  // namespace

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
    std::lock_guard<std::mutex> w_lock(windows_mu_);
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

}  // namespace gpudoctor::recorder
