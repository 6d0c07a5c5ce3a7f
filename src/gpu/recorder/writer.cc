// The buffer pool CUPTI fills, the writer thread that turns full buffers into the file's records,
// and the file's records themselves (strings interned, NCCL calls, notes beside the file).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/recorder/recorder.h"

namespace gpudoctor::recorder {

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

void Recorder::writeNcclCalls() {
  std::vector<rec::NcclCall> calls;
  {
    std::lock_guard<std::mutex> l(nccl_mu_);
    calls.swap(nccl_calls_);
  }
  for (const auto& c : calls) append(rec::Type::kNcclCall, &c, sizeof c);
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

}  // namespace gpudoctor::recorder
