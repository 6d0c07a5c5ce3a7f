#include "datapipe/shard_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <mutex>
#include <thread>

namespace gpudoctor {

namespace fs = std::filesystem;

StagingAllocator pageableStaging() {
  StagingAllocator a;
  a.alloc = [](size_t n) -> void* {
    void* p = nullptr;
    return ::posix_memalign(&p, 4096, n) == 0 ? p : nullptr;
  };
  a.release = [](void* p) { std::free(p); };
  a.kind = "pageable";
  return a;
}

Result<std::unique_ptr<ShardSet>> ShardSet::open(const std::string& path) {
  auto idx = readShardIndex(path);
  if (!idx.ok()) return idx.error();
  std::unique_ptr<ShardSet> set(new ShardSet());
  std::error_code ec;
  set->dir_ = fs::is_directory(path, ec) ? path : fs::path(path).parent_path().string();
  if (set->dir_.empty()) set->dir_ = ".";
  set->index_ = std::move(idx.value());
  for (size_t s = 0; s < set->index_.shards.size(); ++s) {
    const auto& e = set->index_.shards[s];
    std::string p = set->dir_ + "/" + e.name;
    int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Error{p + ": cannot open: " + std::strerror(errno)};
    struct stat st {};
    if (::fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) != e.bytes) {
      ::close(fd);
      return Error{p + ": truncated or replaced: " + std::to_string(st.st_size) + " bytes, the index says " +
                   std::to_string(e.bytes)};
    }
    void* m = ::mmap(nullptr, e.bytes, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (m == MAP_FAILED) return Error{p + ": cannot map: " + std::strerror(errno)};
    set->maps_.push_back({static_cast<const char*>(m), e.bytes});
    for (size_t k = 0; k < e.members.size(); ++k) set->by_key_.emplace(e.members[k].key, std::make_pair(s, k));
  }
  return set;
}

ShardSet::~ShardSet() {
  for (auto& [p, n] : maps_) ::munmap(const_cast<char*>(p), n);
}

std::string_view ShardSet::member(size_t s, size_t m) const {
  const auto& t = index_.shards[s].members[m].tar;
  return {maps_[s].first + t.data_offset, t.size_bytes};
}

std::vector<std::pair<size_t, size_t>> ShardSet::sample(const std::string& key) const {
  std::vector<std::pair<size_t, size_t>> out;
  auto it = by_key_.find(key);
  if (it == by_key_.end()) return out;
  auto [s, k] = it->second;
  const auto& ms = index_.shards[s].members;
  // Members of one sample are adjacent in a shard; emplace kept the first of them.
  while (k > 0 && ms[k - 1].key == key) --k;
  for (; k < ms.size() && ms[k].key == key; ++k) out.push_back({s, k});
  return out;
}

Status ShardSet::checkMember(size_t s, size_t k) const {
  auto d = member(s, k);
  uint32_t crc = static_cast<uint32_t>(::crc32_z(0, reinterpret_cast<const Bytef*>(d.data()), d.size()));
  if (crc == index_.shards[s].members[k].tar.crc32) return {};
  return Error{dir_ + "/" + index_.shards[s].name + ": member \"" + index_.shards[s].members[k].tar.name +
               "\" is corrupt (crc32 differs from the index)"};
}

Status ShardSet::verify() const {
  for (size_t s = 0; s < index_.shards.size(); ++s)
    for (size_t k = 0; k < index_.shards[s].members.size(); ++k)
      if (Status st = checkMember(s, k); !st.ok()) return st;
  return {};
}

namespace {

// A bounded hand-off between prefetch threads and the consumer.
struct Ring {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::pair<char*, size_t>> full;
  std::vector<char*> free;
  int producers_left = 0;
  std::string error;
};

struct Chunk {
  size_t shard, first, last;  // members [first, last)
};

}  // namespace

Result<LoaderStats> streamShards(const ShardSet& set, const LoaderOptions& opt,
                                 const std::function<void(const char*, size_t)>& consume) {
  StagingAllocator fallback = pageableStaging();
  const StagingAllocator& alloc = opt.staging ? *opt.staging : fallback;
  const auto& idx = set.index();
  std::vector<Chunk> chunks;
  LoaderStats st;
  st.staging_kind = alloc.kind;
  for (size_t s = 0; s < idx.shards.size(); ++s) {
    const auto& ms = idx.shards[s].members;
    size_t first = 0, bytes = 0;
    for (size_t k = 0; k < ms.size(); ++k) {
      bytes += ms[k].tar.size_bytes + 512;
      if (bytes >= opt.chunk_bytes) {
        chunks.push_back({s, first, k + 1});
        first = k + 1;
        bytes = 0;
      }
    }
    if (first < ms.size()) chunks.push_back({s, first, ms.size()});
    st.members += ms.size();
    st.samples += idx.shards[s].samples;
  }
  int threads = std::max(1, opt.threads);
  size_t nbuf = static_cast<size_t>(threads * std::max(1, opt.buffers_per_thread));
  size_t bufsz = std::max<size_t>(opt.staging_bytes, 4096);
  Ring ring;
  std::vector<char*> owned;
  for (size_t i = 0; i < nbuf; ++i) {
    char* b = static_cast<char*>(alloc.alloc(bufsz));
    if (!b) {
      for (char* o : owned) alloc.release(o);
      return Error{"cannot allocate " + std::to_string(bufsz) + " bytes of " + alloc.kind + " staging memory"};
    }
    owned.push_back(b);
    ring.free.push_back(b);
  }
  ring.producers_left = threads;
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  auto t0 = std::chrono::steady_clock::now();
  auto producer = [&] {
    char* buf = nullptr;
    size_t used = 0;
    auto take = [&]() -> bool {
      std::unique_lock<std::mutex> l(ring.mu);
      ring.cv.wait(l, [&] { return !ring.free.empty() || stop.load(); });
      if (stop.load()) return false;
      buf = ring.free.back();
      ring.free.pop_back();
      used = 0;
      return true;
    };
    auto hand = [&] {
      std::lock_guard<std::mutex> l(ring.mu);
      ring.full.push_back({buf, used});
      buf = nullptr;
      ring.cv.notify_all();
    };
    for (;;) {
      size_t c = next.fetch_add(1);
      if (c >= chunks.size() || stop.load()) break;
      const Chunk& ch = chunks[c];
      // Ask the kernel to read the whole chunk ahead: one large read instead of a fault per page.
      auto a = set.member(ch.shard, ch.first), z = set.member(ch.shard, ch.last - 1);
      const char* first = reinterpret_cast<const char*>(a.data());
      const char* lo = first - (reinterpret_cast<uintptr_t>(first) & 4095);  // its page's start
      const char* hi = reinterpret_cast<const char*>(z.data() + z.size());
      if (hi > lo) ::madvise(const_cast<char*>(lo), static_cast<size_t>(hi - lo), MADV_WILLNEED);
      for (size_t k = ch.first; k < ch.last; ++k) {
        auto d = set.member(ch.shard, k);
        if (Status crc = opt.verify_crc ? set.checkMember(ch.shard, k) : Status{}; !crc.ok()) {
          std::lock_guard<std::mutex> l(ring.mu);
          if (ring.error.empty()) ring.error = crc.message();
          stop = true;
          ring.cv.notify_all();
          break;
        }
        size_t off = 0;
        while (off < d.size()) {
          if (!buf && !take()) break;
          size_t n = std::min(d.size() - off, bufsz - used);
          std::memcpy(buf + used, d.data() + off, n);
          used += n;
          off += n;
          if (used == bufsz) hand();
        }
      }
    }
    std::lock_guard<std::mutex> l(ring.mu);
    if (buf && used)
      ring.full.push_back({buf, used});
    else if (buf)
      ring.free.push_back(buf);
    --ring.producers_left;
    ring.cv.notify_all();
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(producer);
  for (;;) {
    std::pair<char*, size_t> got;
    {
      std::unique_lock<std::mutex> l(ring.mu);
      ring.cv.wait(l, [&] { return !ring.full.empty() || ring.producers_left == 0; });
      if (ring.full.empty()) break;
      got = ring.full.front();
      ring.full.pop_front();
    }
    consume(got.first, got.second);
    st.bytes += got.second;
    std::lock_guard<std::mutex> l(ring.mu);
    ring.free.push_back(got.first);
    ring.cv.notify_all();
  }
  for (auto& t : pool) t.join();
  st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (char* o : owned) alloc.release(o);
  if (!ring.error.empty()) return Error{ring.error};
  return st;
}

}  // namespace gpudoctor
