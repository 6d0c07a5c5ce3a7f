// Packs a directory of many small sample files into WebDataset-style tar shards plus an index: files of
// one sample (same path up to the first dot of the basename) stay together, order is deterministic
// (sorted, or shuffled with a seed), shards are written in parallel, each only ever visible complete
// (NAME.tar.tmp, fsync, rename), and a re-run resumes by keeping the shards that verify.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/result.h"
#include "datapipe/shard_index.h"

namespace gpudoctor {

// One source file, as stat'ed when the plan was made.
struct SourceFile {
  std::string rel;  // path relative to the source directory, '/' separated (the tar member name)
  uint64_t bytes = 0;
  int64_t mtime_ns = 0;
};

// One sample: its key and its files, in name order.
struct PackSample {
  std::string key;
  std::vector<SourceFile> files;
  uint64_t tar_bytes = 0;  // headers + padded data in a shard
};

// The sample key of a relative path: up to the first dot of the basename (a leading dot does not count).
std::string sampleKey(const std::string& rel);

// Settings for a pack.
struct PackOptions {
  uint64_t shard_bytes = 256ull << 20;  // target shard size; a single larger sample gets a shard of its own
  uint64_t max_samples_per_shard = 0;   // 0: no limit
  int64_t shuffle_seed = -1;            // >= 0: seeded shuffle of the sample order
  int threads = 2;
  std::string prefix = "shard";
  // Called (from worker threads, serialized) after each shard is finished or kept; for progress.
  std::function<void(uint64_t done_shards, uint64_t total_shards, uint64_t done_bytes)> on_shard;
  // Testing: called once the plan is made, before any data is copied.
  std::function<void()> after_plan;
  // Testing: sleep after each shard (lets a test kill a pack mid-way deterministically).
  int delay_ms_per_shard = 0;
  // Leave out what cannot be packed (dangling links, sockets, unreadable files, non-UTF-8 names)
  // instead of stopping at the first; each is listed in PackSummary::skipped.
  bool skip_bad = false;
  // Let this pack replace one in the output folder made from another source or with another shard
  // size or shuffle (its shards are overwritten and those past this plan deleted); else an error.
  bool replace = false;
};

// What a pack did.
struct PackSummary {
  uint64_t samples = 0, files = 0, data_bytes = 0, shard_bytes_total = 0;
  uint64_t shards = 0, shards_kept = 0, shards_written = 0;
  uint64_t stale_removed = 0;        // files of shards numbered past this plan (an earlier pack with other settings)
  std::vector<std::string> skipped;  // with skip_bad: "PATH: why" for each file left out
  double seconds = 0;
};

// Walks `src_dir` and groups its regular files into samples in the pack order. Errors name the file
// (unreadable directory, special file, dangling link, name that is not UTF-8).
Result<std::vector<PackSample>> planSamples(const std::string& src_dir, const PackOptions& opt,
                                            std::vector<std::string>* skipped = nullptr);

// Packs `src_dir` into `out_dir` (created if needed). On error, nothing half-written is left under a
// finished-looking name; shards already finished stay and a re-run keeps them.
Result<PackSummary> packDirectory(const std::string& src_dir, const std::string& out_dir, const PackOptions& opt);

}  // namespace gpudoctor
