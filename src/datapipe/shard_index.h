// The index of a set of tar shards: per member, its sample key, name, data offset, size and crc32, so a
// reader can reach any sample without scanning tar headers, and a resumed pack can tell a finished shard
// from a stale one. Stored as JSON (one file per shard while packing, one `index.json` for the set).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "datapipe/tar_writer.h"

namespace gpudoctor {

// One member of a shard, with where it came from (so a resume can check the source is unchanged).
struct IndexMember {
  std::string key;  // WebDataset sample key: the path up to the first dot of the basename
  TarMember tar;    // name, data offset, size, crc32
  int64_t source_mtime_ns = 0;
};

// One finished shard.
struct ShardEntry {
  std::string name;    // file name inside the output directory, e.g. shard-000000.tar
  uint64_t bytes = 0;  // whole file size
  uint32_t crc32 = 0;  // of the whole file
  uint64_t samples = 0;
  std::vector<IndexMember> members;
};

// The whole set, as `index.json` in the output directory.
struct ShardIndex {
  std::string source;         // the packed directory, as given
  uint64_t shard_bytes = 0;   // target shard size
  int64_t shuffle_seed = -1;  // -1: sorted order
  uint64_t samples = 0;
  uint64_t data_bytes = 0;  // sum of member sizes
  std::vector<ShardEntry> shards;
};

// JSON for one shard (its sidecar `NAME.idx.json`).
std::string shardEntryJson(const ShardEntry& e);
// Parses a shard sidecar; errors name `path`.
Result<ShardEntry> parseShardEntry(const std::string& text, const std::string& path);
// JSON for the set.
std::string shardIndexJson(const ShardIndex& idx);
// Reads and validates `index.json` (or the index inside a directory); errors name the file and what is wrong.
Result<ShardIndex> readShardIndex(const std::string& path);

// Writes `text` to `path` atomically: PATH.tmp, fsync, rename, so a reader never sees it half-written.
Status writeFileDurably(const std::string& path, const std::string& text);

}  // namespace gpudoctor
