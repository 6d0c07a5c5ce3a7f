// Reads packed shards the way a well-fed training loader should: shards memory-mapped, prefetch threads
// copying samples into a small ring of staging buffers (page-locked where CUDA is present, so the copy to
// the GPU can be asynchronous), the consumer never touching the file system. Also random access by key.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/result.h"
#include "datapipe/shard_index.h"

namespace gpudoctor {

// Where staging buffers come from. The default is ordinary (pageable) memory; CUDA builds pass one
// backed by cudaHostAlloc (gpu/pinned_staging.h), which falls back to this when no driver answers.
struct StagingAllocator {
  std::function<void*(size_t)> alloc;
  std::function<void(void*)> release;
  std::string kind = "pageable";  // what the report says about the buffers
};

// The default allocator: page-aligned pageable memory.
StagingAllocator pageableStaging();

// A set of shards opened through its index, every shard mapped read-only.
class ShardSet {
 public:
  // Opens `index.json` (or a folder holding one) and maps its shards. A shard that is missing, has
  // another size than its index says (truncated, replaced) or cannot be mapped is an error naming it.
  static Result<std::unique_ptr<ShardSet>> open(const std::string& path);
  ~ShardSet();
  ShardSet(const ShardSet&) = delete;
  ShardSet& operator=(const ShardSet&) = delete;
  // The index the set was opened with.
  const ShardIndex& index() const { return index_; }
  // The folder holding the shards.
  const std::string& dir() const { return dir_; }
  // The bytes of member `m` of shard `s` (inside the mapping; valid while the set lives).
  std::string_view member(size_t s, size_t m) const;
  // The members of the sample with this key as (shard, member) pairs; empty when there is none.
  std::vector<std::pair<size_t, size_t>> sample(const std::string& key) const;
  // Checks every member's crc32 against the index; the error names the shard and the member.
  Status verify() const;
  // One member's bytes against its crc32 in the index; the error names shard and member.
  Status checkMember(size_t s, size_t m) const;

 private:
  ShardSet() = default;
  ShardIndex index_;
  std::string dir_;
  std::vector<std::pair<const char*, size_t>> maps_;
  std::unordered_map<std::string, std::pair<size_t, size_t>> by_key_;  // key -> (shard, first member)
};

// Settings of the streaming loader.
struct LoaderOptions {
  int threads = 2;                            // prefetch threads
  size_t staging_bytes = 4u << 20;            // one staging buffer
  int buffers_per_thread = 2;                 // ring depth: how far prefetching runs ahead of the consumer
  size_t chunk_bytes = 8u << 20;              // members handed to a thread at a time
  bool verify_crc = false;                    // check each member's crc32 while copying
  const StagingAllocator* staging = nullptr;  // nullptr: pageable
};

// What a streaming pass delivered.
struct LoaderStats {
  uint64_t samples = 0, members = 0, bytes = 0;
  double seconds = 0;
  std::string staging_kind;
};

// Streams every member of the set through the prefetch threads into staging buffers and hands each
// filled buffer (data, bytes) to `consume` on the calling thread, as a training loop would receive
// batches. Order across threads is not preserved.
Result<LoaderStats> streamShards(const ShardSet& set, const LoaderOptions& opt,
                                 const std::function<void(const char*, size_t)>& consume);

}  // namespace gpudoctor
