#include "datapipe/tar_writer.h"

#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace gpudoctor {

namespace {

constexpr size_t kBlock = 512;

uint64_t roundUp(uint64_t n) { return (n + kBlock - 1) / kBlock * kBlock; }

// Octal, zero-padded to width-1 digits plus a NUL (the ustar convention GNU tar reads strictly).
void putOctal(char* field, size_t width, uint64_t v) {
  std::string s(width - 1, '0');
  for (size_t i = width - 1; i-- > 0 && v; v >>= 3) s[i] = static_cast<char>('0' + (v & 7));
  std::memcpy(field, s.data(), width - 1);
  field[width - 1] = '\0';
}

// One pax record "LEN key=value\n", where LEN counts its own digits.
std::string paxRecord(const std::string& key, std::string_view value) {
  size_t body = key.size() + value.size() + 3;  // ' ', '=', '\n'
  size_t len = body + 1;
  while (std::to_string(len).size() + body != len) ++len;
  return std::to_string(len) + " " + key + "=" + std::string(value) + "\n";
}

std::string ustarBlock(std::string_view name, uint64_t size, int64_t mtime_s, char type) {
  std::string h(kBlock, '\0');
  char* b = h.data();
  std::memcpy(b, name.data(), std::min<size_t>(name.size(), 100));
  putOctal(b + 100, 8, 0644);
  putOctal(b + 108, 8, 0);
  putOctal(b + 116, 8, 0);
  putOctal(b + 124, 12, size);
  putOctal(b + 136, 12, static_cast<uint64_t>(mtime_s < 0 ? 0 : mtime_s));
  b[156] = type;
  std::memcpy(b + 257, "ustar", 6);  // magic "ustar\0"
  std::memcpy(b + 263, "00", 2);
  // Checksum: the header's bytes summed with the checksum field taken as spaces.
  std::memset(b + 148, ' ', 8);
  unsigned sum = 0;
  for (size_t i = 0; i < kBlock; ++i) sum += static_cast<unsigned char>(b[i]);
  putOctal(b + 148, 7, sum);
  b[155] = ' ';
  return h;
}

constexpr uint64_t kMaxUstarSize = 077777777777ULL;  // 11 octal digits

std::string paxData(std::string_view name, uint64_t size_bytes) {
  std::string pax;
  if (name.size() > 100) pax += paxRecord("path", name);
  if (size_bytes > kMaxUstarSize) pax += paxRecord("size", std::to_string(size_bytes));
  return pax;
}

}  // namespace

std::string tarHeader(std::string_view name, uint64_t size_bytes, int64_t mtime_s) {
  std::string out;
  std::string pax = paxData(name, size_bytes);
  if (!pax.empty()) {
    // The pax header's own name is informational; GNU tar uses "./PaxHeaders/NAME" too.
    std::string base(name.substr(name.rfind('/') == std::string_view::npos ? 0 : name.rfind('/') + 1));
    std::string xname = ("PaxHeaders/" + base).substr(0, 100);
    out += ustarBlock(xname, pax.size(), mtime_s, 'x');
    out += pax;
    out.resize(roundUp(out.size()), '\0');
  }
  // The ustar name keeps the name's last 100 bytes as a fallback for readers without pax.
  std::string_view fallback = name.size() > 100 ? name.substr(name.size() - 100) : name;
  out += ustarBlock(fallback, size_bytes > kMaxUstarSize ? 0 : size_bytes, mtime_s, '0');
  return out;
}

uint64_t tarMemberBytes(std::string_view name, uint64_t size_bytes) {
  std::string pax = paxData(name, size_bytes);
  uint64_t h = kBlock + (pax.empty() ? 0 : kBlock + roundUp(pax.size()));
  return h + roundUp(size_bytes);
}

Status TarWriter::write(const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  size_t left = n;
  while (left > 0) {
    ssize_t w = ::write(fd_, c, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      return Error{path_ + ": write failed: " + std::strerror(errno)};
    }
    if (w == 0) return Error{path_ + ": write failed: no progress"};
    c += w;
    left -= static_cast<size_t>(w);
  }
  crc_ = static_cast<uint32_t>(::crc32_z(crc_, static_cast<const Bytef*>(p), n));
  offset_ += n;
  return {};
}

Status TarWriter::pad() {
  static const char zeros[kBlock] = {};
  size_t rem = offset_ % kBlock;
  return rem ? write(zeros, kBlock - rem) : Status{};
}

Status TarWriter::addBytes(std::string_view name, std::string_view data, int64_t mtime_s, TarMember* out) {
  std::string h = tarHeader(name, data.size(), mtime_s);
  if (Status s = write(h.data(), h.size()); !s.ok()) return s;
  if (out) {
    out->name = std::string(name);
    out->data_offset = offset_;
    out->size_bytes = data.size();
    out->crc32 = static_cast<uint32_t>(::crc32_z(0, reinterpret_cast<const Bytef*>(data.data()), data.size()));
  }
  if (Status s = write(data.data(), data.size()); !s.ok()) return s;
  return pad();
}

Status TarWriter::addFile(std::string_view name, int src_fd, const std::string& src_path, uint64_t size_bytes,
                          int64_t mtime_s, TarMember* out) {
  std::string h = tarHeader(name, size_bytes, mtime_s);
  if (Status s = write(h.data(), h.size()); !s.ok()) return s;
  uint64_t data_offset = offset_;
  uint32_t crc = 0;
  thread_local std::vector<char> buf(1 << 20);
  uint64_t left = size_bytes;
  while (left > 0) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(left, buf.size()));
    ssize_t r = ::read(src_fd, buf.data(), want);
    if (r < 0) {
      if (errno == EINTR) continue;
      return Error{src_path + ": read failed: " + std::strerror(errno)};
    }
    if (r == 0)
      return Error{src_path + ": changed while being packed (ended after " + std::to_string(size_bytes - left) +
                   " of " + std::to_string(size_bytes) + " bytes)"};
    crc = static_cast<uint32_t>(::crc32_z(crc, reinterpret_cast<const Bytef*>(buf.data()), static_cast<size_t>(r)));
    if (Status s = write(buf.data(), static_cast<size_t>(r)); !s.ok()) return s;
    left -= static_cast<uint64_t>(r);
  }
  // A file that grew past the size we recorded would be silently cut: check for more bytes.
  char extra;
  ssize_t more;
  do more = ::read(src_fd, &extra, 1);
  while (more < 0 && errno == EINTR);
  if (more > 0)
    return Error{src_path + ": changed while being packed (grew beyond " + std::to_string(size_bytes) + " bytes)"};
  if (out) {
    out->name = std::string(name);
    out->data_offset = data_offset;
    out->size_bytes = size_bytes;
    out->crc32 = crc;
  }
  return pad();
}

Status TarWriter::finish() {
  static const char zeros[2 * kBlock] = {};
  return write(zeros, sizeof zeros);
}

}  // namespace gpudoctor
