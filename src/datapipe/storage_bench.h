// Measures what the storage under a folder delivers to a training job's input pipeline: sequential and
// random reads (block sizes, threads; buffered, O_DIRECT, mmap), many small files against one large file,
// the same small files packed into shards read by the shard reader, cold against warm page cache, and the
// cost of inflating gzip data. It writes its own scratch files under the folder and removes them.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/result.h"
#include "datapipe/shard_reader.h"
#include "model/io_bench.h"

namespace gpudoctor {

// What to measure, and the run's hooks.
struct StorageBenchOptions : StorageBenchPlan {
  const StagingAllocator* staging = nullptr;  // staging buffers for the shard reader
  // Set from a signal handler to stop early; the scratch files are still removed.
  const std::atomic<bool>* cancel = nullptr;
  // Called before each step; `total` is the number of steps.
  std::function<void(const std::string& step, int done, int total)> progress;
};

// Runs the measurements. Errors (folder missing or not writable, no space) name the path.
Result<StorageBenchResult> runStorageBench(const StorageBenchOptions& opt);

// Empties the page cache of the given files: posix_fadvise(DONTNEED) after fdatasync (or drop_caches when
// allowed and asked for). Returns the method used; `resident_share` gets what mincore still sees cached.
std::string evictFromPageCache(const std::vector<std::string>& files, bool allow_drop_caches, double* resident_share);

// The file system type of `path` (ext4, xfs, tmpfs, overlayfs, nfs, ...), from statfs.
std::string filesystemName(const std::string& path);

}  // namespace gpudoctor
