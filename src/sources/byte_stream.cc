#include "sources/byte_stream.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace gpudoctor {
namespace {

// Raw bytes from a file descriptor or from memory.
class RawSource {
 public:
  virtual ~RawSource() = default;
  virtual ssize_t read(char* dst, size_t n) = 0;  // -1 with errno on failure
};

class FdSource : public RawSource {
 public:
  explicit FdSource(int fd) : fd_(fd) {}
  ~FdSource() override { ::close(fd_); }
  ssize_t read(char* dst, size_t n) override {
    for (;;) {
      ssize_t r = ::read(fd_, dst, n);
      if (r < 0 && errno == EINTR) continue;
      return r;
    }
  }

 private:
  int fd_;
};

class MemSource : public RawSource {
 public:
  MemSource(const char* d, size_t n) : d_(d), n_(n) {}
  ssize_t read(char* dst, size_t n) override {
    size_t k = std::min(n, n_ - pos_);
    std::memcpy(dst, d_ + pos_, k);
    pos_ += k;
    return static_cast<ssize_t>(k);
  }

 private:
  const char* d_;
  size_t n_, pos_ = 0;
};

// Plain bytes; the first few bytes may have been read already to sniff the format.
class PlainStream : public ByteStream {
 public:
  PlainStream(std::unique_ptr<RawSource> src, std::string name, std::string head)
      : src_(std::move(src)), name_(std::move(name)), head_(std::move(head)) {
    disk_ = head_.size();
  }
  Result<size_t> read(char* dst, size_t n) override {
    if (head_pos_ < head_.size()) {
      size_t k = std::min(n, head_.size() - head_pos_);
      std::memcpy(dst, head_.data() + head_pos_, k);
      head_pos_ += k;
      return k;
    }
    ssize_t r = src_->read(dst, n);
    if (r < 0) return Error{name_ + ": read failed: " + std::strerror(errno)};
    disk_ += static_cast<uint64_t>(r);
    return static_cast<size_t>(r);
  }
  uint64_t fileBytes() const override { return disk_; }
  bool compressed() const override { return false; }

 private:
  std::unique_ptr<RawSource> src_;
  std::string name_, head_;
  size_t head_pos_ = 0;
  uint64_t disk_ = 0;
};

// Streaming inflate of one or more concatenated gzip members.
class GzipStream : public ByteStream {
 public:
  GzipStream(std::unique_ptr<RawSource> src, std::string name, std::string head)
      : src_(std::move(src)), name_(std::move(name)), in_(1 << 20) {
    std::memcpy(in_.data(), head.data(), head.size());
    zs_.next_in = reinterpret_cast<Bytef*>(in_.data());
    zs_.avail_in = static_cast<uInt>(head.size());
    disk_ = head.size();
    ok_ = inflateInit2(&zs_, 15 + 16) == Z_OK;
  }
  ~GzipStream() override { inflateEnd(&zs_); }

  Result<size_t> read(char* dst, size_t n) override {
    if (!ok_) return Error{name_ + ": cannot initialise zlib"};
    if (done_) return size_t{0};
    zs_.next_out = reinterpret_cast<Bytef*>(dst);
    n = std::min<size_t>(n, 1u << 30);  // zlib counts in 32 bits
    zs_.avail_out = static_cast<uInt>(n);
    while (zs_.avail_out > 0) {
      if (zs_.avail_in == 0 && !src_eof_) {
        ssize_t r = src_->read(in_.data(), in_.size());
        if (r < 0) return Error{name_ + ": read failed: " + std::strerror(errno)};
        if (r == 0) src_eof_ = true;
        disk_ += static_cast<uint64_t>(r);
        zs_.next_in = reinterpret_cast<Bytef*>(in_.data());
        zs_.avail_in = static_cast<uInt>(r);
      }
      if (zs_.avail_in == 0 && src_eof_) {
        if (member_started_)
          return Error{name_ + ": truncated gzip stream (ends after " + std::to_string(disk_) + " compressed bytes)"};
        done_ = true;
        break;
      }
      member_started_ = true;
      int rc = inflate(&zs_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        member_started_ = false;
        // Another member may follow (pigz, concatenated files); anything else is an error.
        if (zs_.avail_in == 0 && !src_eof_) {
          ssize_t r = src_->read(in_.data(), in_.size());
          if (r < 0) return Error{name_ + ": read failed: " + std::strerror(errno)};
          disk_ += static_cast<uint64_t>(r);
          if (r == 0) src_eof_ = true;
          zs_.next_in = reinterpret_cast<Bytef*>(in_.data());
          zs_.avail_in = static_cast<uInt>(r);
        }
        if (zs_.avail_in == 0) {
          done_ = true;
          break;
        }
        if (zs_.next_in[0] != 0x1f) {
          return Error{name_ + ": unexpected data after the end of the gzip stream"};
        }
        inflateReset(&zs_);
        continue;
      }
      if (rc == Z_BUF_ERROR) continue;  // needs more input; loop reads it
      if (rc != Z_OK) {
        return Error{name_ + ": corrupt gzip data (" + (zs_.msg ? zs_.msg : "zlib error") + ") near compressed byte " +
                     std::to_string(disk_ - zs_.avail_in)};
      }
    }
    return n - zs_.avail_out;
  }
  uint64_t fileBytes() const override { return disk_; }
  bool compressed() const override { return true; }

 private:
  std::unique_ptr<RawSource> src_;
  std::string name_;
  std::vector<char> in_;
  z_stream zs_{};
  bool ok_ = false, src_eof_ = false, done_ = false, member_started_ = false;
  uint64_t disk_ = 0;
};

std::unique_ptr<ByteStream> wrap(std::unique_ptr<RawSource> src, std::string name) {
  std::string head(2, '\0');
  size_t got = 0;
  while (got < 2) {
    ssize_t r = src->read(head.data() + got, 2 - got);
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  head.resize(got);
  if (got == 2 && static_cast<unsigned char>(head[0]) == 0x1f && static_cast<unsigned char>(head[1]) == 0x8b)
    return std::make_unique<GzipStream>(std::move(src), std::move(name), std::move(head));
  return std::make_unique<PlainStream>(std::move(src), std::move(name), std::move(head));
}

}  // namespace

Result<std::unique_ptr<ByteStream>> ByteStream::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error{path + ": cannot open: " + std::strerror(errno)};
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return Error{path + ": is a directory"};
  }
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  auto s = wrap(std::make_unique<FdSource>(fd), path);
  s->size_on_disk_ = static_cast<uint64_t>(st.st_size);
  return s;
}

std::unique_ptr<ByteStream> ByteStream::fromMemory(const char* data, size_t size, std::string name) {
  auto s = wrap(std::make_unique<MemSource>(data, size), std::move(name));
  s->size_on_disk_ = size;
  return s;
}

Result<std::string> readAllBytes(const std::string& path) {
  auto in = ByteStream::open(path);
  if (!in.ok()) return in.error();
  std::string text;
  std::vector<char> buf(1 << 20);
  for (;;) {
    auto r = in.value()->read(buf.data(), buf.size());
    if (!r.ok()) return r.error();
    if (r.value() == 0) break;
    text.append(buf.data(), r.value());
  }
  return text;
}

std::string gzipBytes(std::string_view text, int level) {
  z_stream z{};
  deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);  // 15 + 16: a gzip header
  std::string out(deflateBound(&z, static_cast<uLong>(text.size())) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

}  // namespace gpudoctor
