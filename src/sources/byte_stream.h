// Sequential bytes of a trace file, decompressed on the fly when it is gzip (detected by magic
// bytes, not by name), so a multi-gigabyte .json.gz never has to be held in memory.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"

namespace gpudoctor {

// A forward-only reader of (decompressed) bytes.
class ByteStream {
 public:
  virtual ~ByteStream() = default;
  // Fills up to n bytes; returns how many (0 means the end), or an Error naming the file.
  virtual Result<size_t> read(char* dst, size_t n) = 0;
  // Bytes read from disk so far.
  virtual uint64_t fileBytes() const = 0;
  // Size of the file on disk (0 when unknown), to size buffers ahead.
  virtual uint64_t sizeOnDisk() const { return size_on_disk_; }
  // True when the file is gzip-compressed.
  virtual bool compressed() const = 0;
  // Opens path; gzip input (any number of members) is inflated with zlib.
  static Result<std::unique_ptr<ByteStream>> open(const std::string& path);
  // Wraps an in-memory buffer (not copied; must outlive the stream). Used by the fuzzer and tests.
  static std::unique_ptr<ByteStream> fromMemory(const char* data, size_t size, std::string name);

 protected:
  uint64_t size_on_disk_ = 0;
};

// A whole (small) file, decompressed when it is gzip; errors name the file.
Result<std::string> readAllBytes(const std::string& path);

// text as one gzip member (zlib, the given level), for files that ByteStream reads back.
std::string gzipBytes(std::string_view text, int level = 6);

}  // namespace gpudoctor
