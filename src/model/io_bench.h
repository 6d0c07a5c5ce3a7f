// What `bench io` measured, as plain data: the plan (sizes, block sizes, threads), one figure per
// cell and the run's notes. datapipe/storage_bench fills it; diagnosis/io_advice and report read it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gpudoctor {

// What to measure and how much.
struct StorageBenchPlan {
  std::string dir;                           // the storage to measure (scratch files go below it)
  uint64_t large_file_bytes = 256ull << 20;  // the one large file
  uint64_t small_files = 5000;               // the many small files ...
  uint64_t small_file_bytes = 4096;          // ... of this size
  uint64_t shard_bytes = 16ull << 20;        // shard size when the small files are packed
  std::vector<uint64_t> seq_block_bytes = {64 << 10, 1 << 20};
  std::vector<uint64_t> rand_block_bytes = {4 << 10, 64 << 10};
  std::vector<int> threads = {1, 2, 4};
  double seconds_per_cell = 0.25;  // cap on each large-file measurement
  bool cold = true;                // also measure with the page cache emptied
  bool drop_caches = false;        // allow /proc/sys/vm/drop_caches (whole machine; root)
  bool keep = false;               // leave the scratch files
};

// One measured cell.
struct ReadFigure {
  std::string pattern;  // sequential, random, small files, shards, open+stat+close
  std::string method;   // buffered, O_DIRECT, mmap, shard reader
  std::string cache;    // warm, cold, bypassed (O_DIRECT)
  uint64_t block_bytes = 0;
  int threads = 1;
  uint64_t bytes = 0;  // bytes delivered
  uint64_t ops = 0;    // reads, or files / samples for the file patterns
  double seconds = 0;
  // Delivered bytes per second, in GB/s (1e9).
  double gbps() const { return seconds > 0 ? bytes / seconds / 1e9 : 0; }
  // Operations (reads, files, samples) per second.
  double opsPerSecond() const { return seconds > 0 ? ops / seconds : 0; }
};

// Everything a run measured, and how.
struct StorageBenchResult {
  std::string dir, filesystem;
  int cpus = 1;
  StorageBenchPlan options;
  std::string cold_method;          // how the cache was emptied, or why it could not be
  double cold_resident_share = -1;  // share of the scratch data still in the page cache after eviction (mincore)
  bool o_direct = false;
  std::string o_direct_note;
  std::string staging_kind;
  double open_stat_close_ns = 0;   // per small file, warm metadata
  double inflate_bytes_per_s = 0;  // gzip (zlib) inflate output per core
  double compression_ratio = 0;    // of the scratch data at zlib level 6
  double pack_seconds = 0;         // packing the small files into shards
  std::vector<ReadFigure> figures;
  double seconds = 0;
};

}  // namespace gpudoctor
