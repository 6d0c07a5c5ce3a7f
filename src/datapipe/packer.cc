#include "datapipe/packer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <thread>

namespace gpudoctor {

namespace {
namespace fs = std::filesystem;

bool validUtf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : 9;
    if (n == 9 || i + n >= s.size()) return false;
    for (size_t k = 1; k <= n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += n + 1;
  }
  return true;
}

int64_t mtimeNs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

struct ShardPlan {
  std::string name;
  std::vector<size_t> samples;  // indices into the sample list
};

// Reads the whole file to compute its crc32; a shard is kept on resume only if this matches its sidecar.
Result<uint32_t> fileCrc(const std::string& path, uint64_t expect_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error{path + ": cannot open: " + std::strerror(errno)};
  std::vector<char> buf(1 << 20);
  uint32_t crc = 0;
  uint64_t total = 0;
  for (;;) {
    ssize_t r = ::read(fd, buf.data(), buf.size());
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      ::close(fd);
      return Error{path + ": read failed: " + std::strerror(errno)};
    }
    if (r == 0) break;
    crc = static_cast<uint32_t>(::crc32_z(crc, reinterpret_cast<const Bytef*>(buf.data()), static_cast<size_t>(r)));
    total += static_cast<uint64_t>(r);
  }
  ::close(fd);
  if (total != expect_bytes) return Error{path + ": size differs from its index"};
  return crc;
}

Status fsyncDir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Error{dir + ": cannot open: " + std::strerror(errno)};
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return Error{dir + ": fsync failed: " + std::strerror(errno)};
  return {};
}

// True when the sidecar describes exactly the planned members (same names, sizes, source mtimes).
bool sidecarMatches(const ShardEntry& e, const std::vector<PackSample>& samples, const ShardPlan& p) {
  size_t k = 0;
  for (size_t si : p.samples)
    for (const auto& f : samples[si].files) {
      if (k >= e.members.size()) return false;
      const auto& m = e.members[k++];
      if (m.tar.name != f.rel || m.tar.size_bytes != f.bytes || m.source_mtime_ns != f.mtime_ns ||
          m.key != samples[si].key)
        return false;
    }
  return k == e.members.size() && e.samples == p.samples.size();
}

Result<ShardEntry> writeShard(const std::string& src_dir, const std::string& out_dir, const ShardPlan& p,
                              const std::vector<PackSample>& samples, const std::atomic<bool>& stop) {
  std::string final_path = out_dir + "/" + p.name;
  std::string tmp = final_path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Error{tmp + ": cannot create: " + std::strerror(errno)};
  auto fail = [&](const std::string& m) -> Result<ShardEntry> {
    ::close(fd);
    ::unlink(tmp.c_str());
    return Error{m};
  };
  TarWriter w(fd, tmp);
  ShardEntry e;
  e.name = p.name;
  e.samples = p.samples.size();
  for (size_t si : p.samples) {
    if (stop.load()) return fail("stopped");
    for (const auto& f : samples[si].files) {
      std::string src = src_dir + "/" + f.rel;
      int in = ::open(src.c_str(), O_RDONLY | O_CLOEXEC);
      if (in < 0) return fail(src + ": cannot open: " + std::strerror(errno));
      struct stat st {};
      if (::fstat(in, &st) != 0 || static_cast<uint64_t>(st.st_size) != f.bytes || mtimeNs(st) != f.mtime_ns) {
        ::close(in);
        return fail(src + ": changed while being packed (size or modification time differs from when it was listed)");
      }
      ::posix_fadvise(in, 0, 0, POSIX_FADV_SEQUENTIAL);
      IndexMember m;
      m.key = samples[si].key;
      m.source_mtime_ns = f.mtime_ns;
      Status s = w.addFile(f.rel, in, src, f.bytes, f.mtime_ns / 1000000000, &m.tar);
      // A writer that appended in place keeps the size but moves the mtime: check again after the copy.
      struct stat after {};
      bool changed = s.ok() && (::fstat(in, &after) != 0 || static_cast<uint64_t>(after.st_size) != f.bytes ||
                                mtimeNs(after) != f.mtime_ns);
      ::close(in);
      if (!s.ok()) return fail(s.message());
      if (changed) return fail(src + ": changed while being packed (modified during the copy)");
      e.members.push_back(std::move(m));
    }
  }
  if (Status s = w.finish(); !s.ok()) return fail(s.message());
  if (::fsync(fd) != 0) return fail(tmp + ": fsync failed: " + std::strerror(errno));
  if (::close(fd) != 0) {
    ::unlink(tmp.c_str());
    return Error{tmp + ": close failed: " + std::strerror(errno)};
  }
  e.bytes = w.bytes();
  e.crc32 = w.crc32();
  // The sidecar goes first: a tar under its final name always has an index that verifies it.
  if (Status s = writeFileDurably(final_path + ".idx.json", shardEntryJson(e)); !s.ok()) {
    ::unlink(tmp.c_str());
    return Error{s.message()};
  }
  if (::rename(tmp.c_str(), final_path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return Error{final_path + ": cannot rename into place: " + std::strerror(errno)};
  }
  return e;
}

}  // namespace

std::string sampleKey(const std::string& rel) {
  size_t slash = rel.rfind('/');
  size_t base = slash == std::string::npos ? 0 : slash + 1;
  size_t dot = rel.find('.', base + 1);
  return dot == std::string::npos ? rel : rel.substr(0, dot);
}

Result<std::vector<PackSample>> planSamples(const std::string& src_dir, const PackOptions& opt,
                                            std::vector<std::string>* skipped) {
  std::error_code ec;
  if (!fs::is_directory(src_dir, ec)) return Error{src_dir + ": not a directory"};
  std::vector<SourceFile> files;
  fs::recursive_directory_iterator it(src_dir, fs::directory_options::none, ec), end;
  if (ec) return Error{src_dir + ": cannot read: " + ec.message()};
  for (; it != end; it.increment(ec)) {
    if (ec) return Error{src_dir + ": cannot read a folder inside: " + ec.message()};
    const fs::path& p = it->path();
    std::string rel = p.lexically_relative(src_dir).generic_string();
    // A file that cannot be packed stops the plan, or with skip_bad is left out and listed.
    auto bad = [&](const std::string& why) -> bool {
      if (!opt.skip_bad || skipped == nullptr) return true;
      skipped->push_back(p.string() + ": " + why);
      return false;
    };
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) {
      std::string why = std::string(errno == ENOENT ? "a dangling link" : "cannot stat") + ": " + std::strerror(errno);
      if (bad(why)) return Error{p.string() + ": " + why + " (--skip-bad leaves such files out)"};
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      // Symbolic links to folders are not followed (they can loop); real folders are walked.
      continue;
    }
    std::string why;
    if (!S_ISREG(st.st_mode))
      why = "not a regular file (sockets, pipes and devices cannot be packed)";
    else if (!validUtf8(rel))
      why = "name is not valid UTF-8 (the index and WebDataset need UTF-8 names)";
    else if (::access(p.c_str(), R_OK) != 0)
      why = std::string("not readable: ") + std::strerror(errno);
    if (!why.empty()) {
      if (bad(why)) return Error{p.string() + ": " + why + " (--skip-bad leaves such files out)"};
      continue;
    }
    files.push_back({rel, static_cast<uint64_t>(st.st_size), mtimeNs(st)});
  }
  std::map<std::string, PackSample> by_key;
  for (auto& f : files) {
    std::string key = sampleKey(f.rel);
    auto& s = by_key[key];
    s.key = key;
    s.tar_bytes += tarMemberBytes(f.rel, f.bytes);
    s.files.push_back(std::move(f));
  }
  std::vector<PackSample> samples;
  samples.reserve(by_key.size());
  for (auto& [k, s] : by_key) {
    std::sort(s.files.begin(), s.files.end(), [](const auto& a, const auto& b) { return a.rel < b.rel; });
    samples.push_back(std::move(s));
  }
  if (opt.shuffle_seed >= 0) {
    // Our own Fisher-Yates: std::shuffle's algorithm differs between standard libraries.
    std::mt19937_64 rng(static_cast<uint64_t>(opt.shuffle_seed));
    for (size_t i = samples.size(); i > 1; --i) std::swap(samples[i - 1], samples[rng() % i]);
  }
  return samples;
}

Result<PackSummary> packDirectory(const std::string& src_dir, const std::string& out_dir, const PackOptions& opt) {
  auto t0 = std::chrono::steady_clock::now();
  std::error_code ec;
  if (opt.shard_bytes < 1024) return Error{"shard size must be at least 1 KiB"};
  if (!fs::is_directory(src_dir, ec)) return Error{src_dir + ": not a directory"};
  // Packing into the source would pack our own shards on the next run.
  fs::path src_c = fs::canonical(src_dir, ec), out_c = fs::weakly_canonical(out_dir, ec);
  auto rel = out_c.lexically_relative(src_c);
  if (!rel.empty() && *rel.begin() != "..")
    return Error{out_dir + ": the output folder is inside the source folder " + src_dir};
  // The output folder is made only once there is something to pack: a failed plan leaves nothing.
  std::vector<std::string> skipped;
  auto planned = planSamples(src_dir, opt, &skipped);
  if (!planned.ok()) return planned.error();
  const auto& samples = planned.value();
  if (samples.empty()) return Error{src_dir + ": no files to pack"};
  // A pack already there from another source or with other settings is replaced only when asked.
  if (fs::exists(fs::path(out_dir) / "index.json", ec) && !opt.replace) {
    auto old = readShardIndex(out_dir + "/index.json");
    if (old.ok()) {
      std::error_code e2;
      std::string diff;
      if (fs::weakly_canonical(old.value().source, e2) != src_c)
        diff = "source " + old.value().source;
      else if (old.value().shard_bytes != opt.shard_bytes)
        diff = "shard size " + std::to_string(old.value().shard_bytes) + " B, now " + std::to_string(opt.shard_bytes) +
               " B";
      else if (old.value().shuffle_seed != opt.shuffle_seed)
        diff = "shuffle " + std::to_string(old.value().shuffle_seed) + ", now " + std::to_string(opt.shuffle_seed);
      if (!diff.empty())
        return Error{out_dir + ": holds a pack made with other settings (" + diff +
                     "): --replace overwrites it, or give another output folder"};
    }
  }
  fs::create_directories(out_dir, ec);
  if (ec || !fs::is_directory(out_dir)) return Error{out_dir + ": cannot create the output folder: " + ec.message()};

  std::vector<ShardPlan> plans;
  uint64_t cur = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    bool full = !plans.empty() && !plans.back().samples.empty() &&
                (cur + samples[i].tar_bytes + 1024 > opt.shard_bytes ||
                 (opt.max_samples_per_shard && plans.back().samples.size() >= opt.max_samples_per_shard));
    if (plans.empty() || full) {
      char name[64];
      std::snprintf(name, sizeof name, "-%06zu.tar", plans.size());
      plans.push_back({opt.prefix + name, {}});
      cur = 0;
    }
    plans.back().samples.push_back(i);
    cur += samples[i].tar_bytes;
  }
  // Leftover temporaries of an interrupted run are never finished shards: remove them.
  for (const auto& e : fs::directory_iterator(out_dir, ec)) {
    std::string file = e.path().filename().string();
    if (file.rfind(opt.prefix + "-", 0) == 0 && file.size() > 4 && file.compare(file.size() - 4, 4, ".tmp") == 0)
      fs::remove(e.path(), ec);
  }
  if (opt.after_plan) opt.after_plan();

  std::vector<ShardEntry> entries(plans.size());
  std::vector<char> kept(plans.size(), 0);
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::string first_error;
  uint64_t done = 0, done_bytes = 0;
  auto worker = [&] {
    for (;;) {
      size_t i = next.fetch_add(1);
      if (i >= plans.size() || stop.load()) return;
      const auto& p = plans[i];
      std::string final_path = out_dir + "/" + p.name;
      bool keep = false;
      // Resume: a finished shard whose sidecar describes the same members and whose bytes verify is kept.
      if (fs::exists(final_path, ec)) {
        std::string side = final_path + ".idx.json";
        std::ifstream f(side, std::ios::binary);
        if (f) {
          std::string text((std::istreambuf_iterator<char>(f)), {});
          auto e = parseShardEntry(text, side);
          if (e.ok() && sidecarMatches(e.value(), samples, p)) {
            auto crc = fileCrc(final_path, e.value().bytes);
            if (crc.ok() && crc.value() == e.value().crc32) {
              entries[i] = std::move(e.value());
              keep = true;
            }
          }
        }
      }
      if (!keep) {
        auto e = writeShard(src_dir, out_dir, p, samples, stop);
        if (!e.ok()) {
          std::lock_guard<std::mutex> l(mu);
          if (first_error.empty() && e.error().message != "stopped") first_error = e.error().message;
          stop = true;
          return;
        }
        entries[i] = std::move(e.value());
      }
      kept[i] = keep;
      {
        std::lock_guard<std::mutex> l(mu);
        ++done;
        done_bytes += entries[i].bytes;
        if (opt.on_shard) opt.on_shard(done, plans.size(), done_bytes);
      }
      if (opt.delay_ms_per_shard > 0) std::this_thread::sleep_for(std::chrono::milliseconds(opt.delay_ms_per_shard));
    }
  };
  int n = std::max(1, std::min<int>(opt.threads, static_cast<int>(plans.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < n; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (!first_error.empty()) return Error{first_error};

  ShardIndex idx;
  idx.source = src_dir;
  idx.shard_bytes = opt.shard_bytes;
  idx.shuffle_seed = opt.shuffle_seed;
  PackSummary sum;
  for (size_t i = 0; i < entries.size(); ++i) {
    idx.samples += entries[i].samples;
    for (const auto& m : entries[i].members) idx.data_bytes += m.tar.size_bytes;
    sum.shard_bytes_total += entries[i].bytes;
    sum.files += entries[i].members.size();
    (kept[i] ? sum.shards_kept : sum.shards_written)++;
  }
  idx.shards = std::move(entries);
  if (Status s = writeFileDurably(out_dir + "/index.json", shardIndexJson(idx)); !s.ok()) return Error{s.message()};
  // Shards numbered past this plan are from an earlier pack with other settings: a glob over
  // PREFIX-*.tar must not pick them up with this index.
  for (const auto& e : fs::directory_iterator(out_dir, ec)) {
    std::string entry = e.path().filename().string();
    size_t digits = opt.prefix.size() + 1;
    if (entry.rfind(opt.prefix + "-", 0) != 0 || entry.size() < digits + 10) continue;
    std::string num = entry.substr(digits, 6), rest = entry.substr(digits + 6);
    if (num.find_first_not_of("0123456789") != std::string::npos || (rest != ".tar" && rest != ".tar.idx.json"))
      continue;
    if (std::stoull(num) >= plans.size() && fs::remove(e.path(), ec)) ++sum.stale_removed;
  }
  if (Status s = fsyncDir(out_dir); !s.ok()) return Error{s.message()};
  sum.skipped = std::move(skipped);
  sum.samples = idx.samples;
  sum.data_bytes = idx.data_bytes;
  sum.shards = idx.shards.size();
  sum.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return sum;
}

}  // namespace gpudoctor
