// Writes tar archives (POSIX ustar, with pax extended headers for long names and huge sizes) that GNU
// tar and Python's tarfile (what WebDataset uses) read. Written by hand rather than through libarchive
// because the shard index needs the exact byte offset of every member's data; the format is small.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace gpudoctor {

// Where one member's data sits in the archive, and its checksum.
struct TarMember {
  std::string name;          // member name as stored (relative path, '/' separated)
  uint64_t data_offset = 0;  // byte offset of the data inside the archive
  uint64_t size_bytes = 0;
  uint32_t crc32 = 0;  // zlib crc32 of the data
};

// The header block(s) for one regular-file member: a pax 'x' record first when the name does not fit
// ustar's 100 bytes or the size its 11 octal digits. Always a multiple of 512 bytes.
std::string tarHeader(std::string_view name, uint64_t size_bytes, int64_t mtime_s);

// Appends members to an open file descriptor, tracking offsets and a crc32 of everything written.
// Every write is checked: ENOSPC, EIO and short writes become an Error naming `path`.
class TarWriter {
 public:
  // `fd` stays owned by the caller; `path` only names it in messages.
  TarWriter(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  // Adds a member whose data is `data`.
  Status addBytes(std::string_view name, std::string_view data, int64_t mtime_s, TarMember* out);
  // Adds a member copied from `src_fd`, which must deliver exactly `size_bytes`; a source that ends early
  // or grows is an error naming `src_path` (the file changed while being packed).
  Status addFile(std::string_view name, int src_fd, const std::string& src_path, uint64_t size_bytes, int64_t mtime_s,
                 TarMember* out);
  // Writes the two zero blocks that end an archive.
  Status finish();
  // Bytes written so far.
  uint64_t bytes() const { return offset_; }
  // crc32 of all bytes written so far (what resume verifies a finished shard against).
  uint32_t crc32() const { return crc_; }

 private:
  Status write(const void* p, size_t n);
  Status pad();
  int fd_;
  std::string path_;
  uint64_t offset_ = 0;
  uint32_t crc_ = 0;
};

// Size of the archive member (headers + padded data) for a file of `size_bytes` named `name`.
uint64_t tarMemberBytes(std::string_view name, uint64_t size_bytes);

}  // namespace gpudoctor
