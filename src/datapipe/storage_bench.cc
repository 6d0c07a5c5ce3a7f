#include "datapipe/storage_bench.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "datapipe/packer.h"

namespace gpudoctor {

namespace {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Aligned buffers: O_DIRECT needs the memory, offset and length aligned to the logical block.
struct AlignedBuf {
  char* p = nullptr;
  explicit AlignedBuf(size_t n) {
    void* v = nullptr;
    if (::posix_memalign(&v, 4096, std::max<size_t>(n, 4096)) == 0) p = static_cast<char*>(v);
  }
  ~AlignedBuf() { std::free(p); }
};

// Text-like bytes (16 symbols: about 2:1 under gzip) so the decompression figure means something; random
// bytes would be stored, not compressed.
void fillData(char* p, size_t n, uint64_t seed) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; i += 16) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    uint64_t y = x;
    for (size_t k = 0; k < 16 && i + k < n; ++k, y >>= 4) p[i + k] = static_cast<char>('a' + (y & 15));
  }
}

Status writeScratch(const std::string& path, uint64_t bytes, uint64_t seed) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Error{path + ": cannot create: " + std::strerror(errno)};
  std::vector<char> buf(std::min<uint64_t>(bytes, 4u << 20) + 16);
  uint64_t left = bytes, chunk = 0;
  while (left > 0) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(left, buf.size() - 16));
    fillData(buf.data(), n, seed + chunk++);
    const char* c = buf.data();
    size_t m = n;
    while (m > 0) {
      ssize_t w = ::write(fd, c, m);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        std::string e = path + ": write failed: " + std::strerror(errno);
        ::close(fd);
        return Error{e};
      }
      c += w, m -= static_cast<size_t>(w);
    }
    left -= n;
  }
  ::close(fd);
  return {};
}

double residentShare(const std::vector<std::string>& files) {
  uint64_t pages = 0, resident = 0;
  long ps = ::sysconf(_SC_PAGESIZE);
  // Sampling keeps this quick for many small files; every large file is looked at whole.
  size_t step = std::max<size_t>(1, files.size() / 500);
  for (size_t i = 0; i < files.size(); i += step) {
    int fd = ::open(files[i].c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && st.st_size > 0) {
      void* m = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
      if (m != MAP_FAILED) {
        size_t n = (static_cast<size_t>(st.st_size) + ps - 1) / ps;
        std::vector<unsigned char> v(n);
        if (::mincore(m, static_cast<size_t>(st.st_size), v.data()) == 0) {
          pages += n;
          for (auto b : v) resident += b & 1;
        }
        ::munmap(m, static_cast<size_t>(st.st_size));
      }
    }
    ::close(fd);
  }
  return pages ? static_cast<double>(resident) / pages : 0;
}

enum class Method { kBuffered, kDirect, kMmap };

const char* methodName(Method m) {
  return m == Method::kBuffered ? "buffered" : m == Method::kDirect ? "O_DIRECT" : "mmap";
}

// One large-file cell: `threads` readers, sequential (each its own contiguous region) or random (aligned
// offsets over the whole file), until their bytes are read or the time cap passes.
Result<ReadFigure> readLargeFile(const std::string& path, uint64_t size, bool random, Method method, uint64_t bs,
                                 int threads, double cap_s) {
  int flags = O_RDONLY | O_CLOEXEC | (method == Method::kDirect ? O_DIRECT : 0);
  int fd = ::open(path.c_str(), flags);
  if (fd < 0)
    return Error{path + ": cannot open" + (method == Method::kDirect ? " with O_DIRECT" : "") + ": " +
                 std::strerror(errno)};
  const char* map = nullptr;
  if (method == Method::kMmap) {
    void* m = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
      ::close(fd);
      return Error{path + ": cannot map: " + std::strerror(errno)};
    }
    ::madvise(m, size, random ? MADV_RANDOM : MADV_SEQUENTIAL);
    map = static_cast<const char*>(m);
  }
  std::atomic<uint64_t> bytes{0}, ops{0};
  std::atomic<int> err{0};
  auto t0 = Clock::now();
  auto deadline = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(cap_s));
  uint64_t blocks = size / bs;
  auto body = [&](int t) {
    AlignedBuf buf(bs);
    uint64_t region = blocks / threads, first = region * t, done_bytes = 0, n = 0;
    uint64_t budget = region * bs;
    uint64_t x = 0x2545F4914F6CDD1Dull * (t + 1);
    for (uint64_t k = 0; done_bytes < budget; ++k) {
      uint64_t block;
      if (random) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        block = x % blocks;
      } else {
        block = first + k;
      }
      uint64_t off = block * bs;
      if (map) {
        std::memcpy(buf.p, map + off, bs);
      } else {
        ssize_t r = ::pread(fd, buf.p, bs, static_cast<off_t>(off));
        if (r < 0) {
          err = errno;
          break;
        }
      }
      done_bytes += bs;
      ++n;
      if ((n & 7) == 0 && Clock::now() >= deadline) break;
    }
    bytes += done_bytes;
    ops += n;
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(body, t);
  body(0);
  for (auto& th : pool) th.join();
  ReadFigure f;
  f.seconds = since(t0);
  if (map) ::munmap(const_cast<char*>(map), size);
  ::close(fd);
  if (err) return Error{path + ": read failed: " + std::strerror(err)};
  f.pattern = random ? "random" : "sequential";
  f.method = methodName(method);
  f.block_bytes = bs;
  f.threads = threads;
  f.bytes = bytes;
  f.ops = ops;
  return f;
}

// Reads every small file whole (open, read, close), files handed out to `threads` readers.
Result<ReadFigure> readSmallFiles(const std::vector<std::string>& files, uint64_t file_bytes, int threads) {
  std::atomic<size_t> next{0};
  std::atomic<uint64_t> bytes{0};
  std::atomic<int> err{0};
  std::string bad;
  auto t0 = Clock::now();
  auto body = [&] {
    std::vector<char> buf(std::max<uint64_t>(file_bytes, 4096) + 4096);
    uint64_t b = 0;
    for (;;) {
      size_t i = next.fetch_add(1);
      if (i >= files.size()) break;
      int fd = ::open(files[i].c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        if (err.exchange(errno) == 0) bad = files[i];
        break;
      }
      ssize_t r;
      while ((r = ::read(fd, buf.data(), buf.size())) > 0) b += static_cast<uint64_t>(r);
      ::close(fd);
    }
    bytes += b;
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(body);
  body();
  for (auto& th : pool) th.join();
  if (err) return Error{bad + ": cannot open: " + std::strerror(err)};
  ReadFigure f;
  f.seconds = since(t0);
  f.pattern = "small files";
  f.method = "buffered";
  f.block_bytes = file_bytes;
  f.threads = threads;
  f.bytes = bytes;
  f.ops = files.size();
  return f;
}

}  // namespace

std::string filesystemName(const std::string& path) {
  struct statfs s {};
  if (::statfs(path.c_str(), &s) != 0) return "unknown";
  switch (static_cast<unsigned long>(s.f_type)) {
    case 0xEF53:
      return "ext4";
    case 0x58465342:
      return "xfs";
    case 0x9123683E:
      return "btrfs";
    case 0x01021994:
      return "tmpfs";
    case 0x794c7630:
      return "overlayfs";
    case 0x6969:
      return "nfs";
    case 0xFF534D42:
      return "cifs";
    case 0x2FC12FC1:
      return "zfs";
    case 0x65735546:
      return "fuse";
    case 0x0BD00BD0:
      return "lustre";
    case 0x00C36400:
      return "ceph";
    case 0x47504653:
      return "gpfs";
    case 0x5346414F:
      return "afs";
    case 0x73717368:
      return "squashfs";
    default: {
      char b[32];
      std::snprintf(b, sizeof b, "0x%lx", static_cast<unsigned long>(s.f_type));
      return b;
    }
  }
}

std::string evictFromPageCache(const std::vector<std::string>& files, bool allow_drop_caches, double* resident_share) {
  std::string method;
  if (allow_drop_caches) {
    ::sync();
    int fd = ::open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
    if (fd >= 0 && ::write(fd, "3", 1) == 1)
      method = "/proc/sys/vm/drop_caches (whole machine: data, dentries, inodes)";
    if (fd >= 0) ::close(fd);
    if (method.empty())
      method = "drop_caches refused (" + std::string(std::strerror(errno)) + "), so ";
    else {
      if (resident_share) *resident_share = residentShare(files);
      return method;
    }
  }
  for (const auto& f : files) {
    int fd = ::open(f.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    // Dirty pages cannot be dropped: write them back first.
    ::fdatasync(fd);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
  method += "posix_fadvise(POSIX_FADV_DONTNEED) per file (file data only; directory and inode caches stay warm)";
  if (resident_share) *resident_share = residentShare(files);
  return method;
}

namespace {

// Room first: the large file, the small files and their shards, and a margin, or one line saying so
// (not a write until the disk is full).
Status checkRoom(const StorageBenchOptions& opt) {
  if (struct statvfs vs; ::statvfs(opt.dir.c_str(), &vs) == 0) {
    const long double avail = static_cast<long double>(vs.f_bavail) * static_cast<long double>(vs.f_frsize);
    const long double need =
        static_cast<long double>(opt.large_file_bytes) +
        2.0L * static_cast<long double>(opt.small_files) * static_cast<long double>(opt.small_file_bytes) +
        64.0L * (1 << 20);
    if (need > avail)
      return Error{
          fmt::format("{}: the benchmark needs {:.2f} GB of scratch space and {:.2f} GB are free (lower "
                      "--large-size or --files)",
                      opt.dir, static_cast<double>(need / 1e9L), static_cast<double>(avail / 1e9L))};
  }
  return {};
}

// The scratch folder, removed when the run ends (unless kept), however it ends.
struct ScratchDir {
  std::string dir;
  bool keep;
  ~ScratchDir() {
    std::error_code e;
    if (!keep) fs::remove_all(dir, e);
  }
};

// The benchmark's steps, each a named action run in order (with progress), over the scratch files.
class StorageBench {
 public:
  StorageBench(const StorageBenchOptions& opt, std::string scratch);
  void addWrites();
  void addReadCells(const std::string& cache);
  void addHostCosts();
  Status run();
  StorageBenchResult take() { return std::move(res_); }

 private:
  void add(std::string name, std::function<Status()> f) { steps_.push_back({std::move(name), std::move(f)}); }
  Status keepFigure(Result<ReadFigure> r, const std::string& cache);
  void evict(const std::vector<std::string>& files);
  Status writeLarge();
  Status writeSmall();
  Status pack();
  Status largeCell(bool random, Method m, uint64_t bs, int t, const std::string& cache);
  Status smallCell(int t, const std::string& cache);
  Status shardCell(int t, const std::string& cache);
  Status openStatClose();
  Status inflate();

  struct Step {
    std::string name;
    std::function<Status()> run;
  };
  const StorageBenchOptions& opt_;
  StorageBenchResult res_;
  std::string scratch_, large_;
  std::vector<std::string> small_, shard_files_;
  std::vector<Step> steps_;
};

StorageBench::StorageBench(const StorageBenchOptions& opt, std::string scratch)
    : opt_(opt), scratch_(std::move(scratch)), large_(scratch_ + "/large.bin") {
  res_.dir = opt.dir;
  res_.options = opt;
  res_.cpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  res_.filesystem = filesystemName(opt.dir);
  small_.reserve(opt.small_files);
  for (uint64_t i = 0; i < opt.small_files; ++i) {
    char rel[64];
    // A thousand files per folder, as datasets usually are, so directory size is not the figure.
    std::snprintf(rel, sizeof rel, "/small/%05llu/%08llu.bin", static_cast<unsigned long long>(i / 1000),
                  static_cast<unsigned long long>(i));
    small_.push_back(scratch_ + rel);
  }
}

Status StorageBench::keepFigure(Result<ReadFigure> r, const std::string& cache) {
  if (!r.ok()) return Error{r.error().message};
  r.value().cache = cache;
  res_.figures.push_back(r.value());
  return {};
}

// Only the files the next cell reads are evicted: emptying 100,000 small files before every
// large-file cell would cost more than the cell.
void StorageBench::evict(const std::vector<std::string>& files) {
  double share = -1;
  res_.cold_method = evictFromPageCache(files, opt_.drop_caches, &share);
  res_.cold_resident_share = std::max(res_.cold_resident_share, share);
}

// The scratch files: the large file, the small files, and the shards packed from them.
void StorageBench::addWrites() {
  add("writing a " + std::to_string(opt_.large_file_bytes >> 20) + " MiB file", [this] { return writeLarge(); });
  add("writing " + std::to_string(opt_.small_files) + " small files", [this] { return writeSmall(); });
  add("packing them into shards", [this] { return pack(); });
}

// The large file; whether it opens with O_DIRECT here.
Status StorageBench::writeLarge() {
  if (Status s = writeScratch(large_, opt_.large_file_bytes, 1); !s.ok()) return s;
  int fd = ::open(large_.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (fd >= 0) {
    res_.o_direct = true;
    ::close(fd);
  } else {
    res_.o_direct_note =
        "O_DIRECT not supported on this filesystem (" + res_.filesystem + ": " + std::strerror(errno) + ")";
  }
  return {};
}

Status StorageBench::writeSmall() {
  std::error_code ec;
  for (uint64_t i = 0; i < small_.size(); ++i) {
    if (i % 1000 == 0) fs::create_directories(fs::path(small_[i]).parent_path(), ec);
    if (i % 1000 == 0 && opt_.cancel && opt_.cancel->load()) return Error{"interrupted; scratch files removed"};
    if (Status s = writeScratch(small_[i], opt_.small_file_bytes, 100 + i); !s.ok()) return s;
  }
  ::sync();
  return {};
}

Status StorageBench::pack() {
  PackOptions po;
  po.shard_bytes = opt_.shard_bytes;
  po.threads = std::min(2, res_.cpus);
  auto t0 = Clock::now();
  auto r = packDirectory(scratch_ + "/small", scratch_ + "/shards", po);
  if (!r.ok()) return Error{r.error().message};
  res_.pack_seconds = since(t0);
  auto idx = readShardIndex(scratch_ + "/shards");
  if (!idx.ok()) return Error{idx.error().message};
  for (const auto& e : idx.value().shards) shard_files_.push_back(scratch_ + "/shards/" + e.name);
  return {};
}

// The read cells of one cache state ("warm" or "cold"): the large file by pattern, method, block
// size and threads; the small files and the shards by threads.
void StorageBench::addReadCells(const std::string& cache) {
  const bool cold = cache == "cold";
  for (bool random : {false, true}) {
    const auto& sizes = random ? opt_.rand_block_bytes : opt_.seq_block_bytes;
    for (Method m : {Method::kBuffered, Method::kMmap, Method::kDirect}) {
      // O_DIRECT never uses the cache: measured once, reported as "bypassed".
      if (m == Method::kDirect && cold) continue;
      for (uint64_t bs : sizes)
        for (int t : opt_.threads) {
          std::string name = std::string(random ? "random " : "sequential ") + methodName(m) + " " +
                             std::to_string(bs >> 10) + " KiB x" + std::to_string(t) + " " + cache;
          add(name, [this, random, m, bs, t, cache] { return largeCell(random, m, bs, t, cache); });
        }
    }
  }
  for (int t : opt_.threads)
    add("small files x" + std::to_string(t) + " " + cache, [this, t, cache] { return smallCell(t, cache); });
  for (int t : opt_.threads)
    add("shards x" + std::to_string(t) + " " + cache, [this, t, cache] { return shardCell(t, cache); });
}

Status StorageBench::largeCell(bool random, Method m, uint64_t bs, int t, const std::string& cache) {
  const bool cold = cache == "cold";
  if (m == Method::kDirect && !res_.o_direct) return {};
  if (cold)
    evict({large_});
  else if (m != Method::kDirect && residentShare({large_}) < 0.99) {
    // Warm means the whole file is cached: read it once first.
    auto w = readLargeFile(large_, opt_.large_file_bytes, false, Method::kBuffered, 1 << 20, 1, 60);
    if (!w.ok()) return Error{w.error().message};
  }
  return keepFigure(readLargeFile(large_, opt_.large_file_bytes, random, m, bs, t, opt_.seconds_per_cell),
                    m == Method::kDirect ? "bypassed" : cache);
}

Status StorageBench::smallCell(int t, const std::string& cache) {
  if (cache == "cold")
    evict(small_);
  else if (auto w = readSmallFiles(small_, opt_.small_file_bytes, 2); !w.ok())
    return Error{w.error().message};
  return keepFigure(readSmallFiles(small_, opt_.small_file_bytes, t), cache);
}

Status StorageBench::shardCell(int t, const std::string& cache) {
  const bool cold = cache == "cold";
  // Pages mapped by a live mapping are not dropped by POSIX_FADV_DONTNEED: the set is opened
  // (mapped) only after the eviction, and closed before the next one.
  if (cold) evict(shard_files_);
  auto set = ShardSet::open(scratch_ + "/shards");
  if (!set.ok()) return Error{set.error().message};
  LoaderOptions lo;
  lo.threads = t;
  lo.staging = opt_.staging;
  if (!cold) {
    auto w = streamShards(*set.value(), lo, [](const char*, size_t) {});
    if (!w.ok()) return Error{w.error().message};
  }
  auto r = streamShards(*set.value(), lo, [](const char*, size_t) {});
  if (!r.ok()) return Error{r.error().message};
  res_.staging_kind = r.value().staging_kind;
  ReadFigure f;
  f.pattern = "shards";
  f.method = "shard reader";
  f.cache = cache;
  f.block_bytes = opt_.small_file_bytes;
  f.threads = t;
  f.bytes = r.value().bytes;
  f.ops = r.value().samples;
  f.seconds = r.value().seconds;
  res_.figures.push_back(f);
  return {};
}

// What the host spends besides reading: opening a file, and inflating gzip data.
void StorageBench::addHostCosts() {
  add("open+stat+close per file", [this] { return openStatClose(); });
  add("gzip inflate", [this] { return inflate(); });
}

Status StorageBench::openStatClose() {
  auto t0 = Clock::now();
  for (const auto& f : small_) {
    struct stat st {};
    ::stat(f.c_str(), &st);
    int fd = ::open(f.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) ::close(fd);
  }
  res_.open_stat_close_ns = small_.empty() ? 0 : since(t0) * 1e9 / small_.size();
  return {};
}

// A sample of the scratch data, compressed once; inflated repeatedly on one core.
Status StorageBench::inflate() {
  uLong n = 8u << 20;
  std::vector<char> raw(n);
  fillData(raw.data(), n, 7);
  uLongf zn = compressBound(n);
  std::vector<Bytef> z(zn);
  if (compress2(z.data(), &zn, reinterpret_cast<const Bytef*>(raw.data()), n, 6) != Z_OK)
    return Error{"zlib compress failed"};
  res_.compression_ratio = static_cast<double>(n) / zn;
  auto t0 = Clock::now();
  uint64_t out = 0;
  do {
    uLongf on = n;
    if (uncompress(reinterpret_cast<Bytef*>(raw.data()), &on, z.data(), zn) != Z_OK)
      return Error{"zlib inflate failed"};
    out += on;
  } while (since(t0) < 0.3);
  res_.inflate_bytes_per_s = out / since(t0);
  return {};
}

// The steps in order, each announced to the progress callback; stops at a cancel or an error.
Status StorageBench::run() {
  int total = static_cast<int>(steps_.size());
  for (int i = 0; i < total; ++i) {
    if (opt_.cancel && opt_.cancel->load()) return Error{"interrupted; scratch files removed"};
    if (opt_.progress) opt_.progress(steps_[i].name, i, total);
    if (Status s = steps_[i].run(); !s.ok()) return Error{s.message()};
  }
  if (opt_.progress) opt_.progress("done", total, total);
  return {};
}

}  // namespace

Result<StorageBenchResult> runStorageBench(const StorageBenchOptions& opt) {
  auto t_start = Clock::now();
  std::error_code ec;
  if (!fs::is_directory(opt.dir, ec)) return Error{opt.dir + ": not a directory"};
  RETURN_IF_ERROR(checkRoom(opt));
  std::string scratch = (fs::path(opt.dir) / (".gpudoctor-bench-io-" + std::to_string(::getpid()))).string();
  fs::create_directories(scratch + "/small", ec);
  if (ec) return Error{opt.dir + ": cannot create scratch files here: " + ec.message()};
  ScratchDir cleanup{scratch, opt.keep};
  StorageBench bench(opt, scratch);
  bench.addWrites();
  bench.addReadCells("warm");
  if (opt.cold) bench.addReadCells("cold");
  bench.addHostCosts();
  RETURN_IF_ERROR(bench.run());
  StorageBenchResult res = bench.take();
  if (!opt.cold) res.cold_method = "not measured (--no-cold)";
  res.seconds = since(t_start);
  return res;
}

}  // namespace gpudoctor
