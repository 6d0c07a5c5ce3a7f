#include "datapipe/shard_index.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace gpudoctor {

namespace {
using nlohmann::ordered_json;
namespace fs = std::filesystem;

constexpr const char* kFormat = "gpudoctor-shards-v1";

ordered_json entryJson(const ShardEntry& e) {
  ordered_json members = ordered_json::array();
  for (const auto& m : e.members)
    members.push_back({{"key", m.key},
                       {"name", m.tar.name},
                       {"offset", m.tar.data_offset},
                       {"size", m.tar.size_bytes},
                       {"crc32", m.tar.crc32},
                       {"mtime_ns", m.source_mtime_ns}});
  return {{"name", e.name}, {"bytes", e.bytes}, {"crc32", e.crc32}, {"samples", e.samples}, {"members", members}};
}

// Field access that turns a wrong or missing field into an error naming the file and the field.
struct Reader {
  const std::string& path;
  std::string err;
  template <class T>
  T get(const nlohmann::json& j, const char* key) {
    if (!err.empty()) return T{};
    auto it = j.find(key);
    if (it == j.end()) {
      err = path + ": index is damaged: missing \"" + key + "\"";
      return T{};
    }
    try {
      return it->get<T>();
    } catch (const nlohmann::json::exception&) {
      err = path + ": index is damaged: \"" + key + "\" has the wrong type";
      return T{};
    }
  }
};

Result<ShardEntry> entryFrom(const nlohmann::json& j, Reader& r) {
  ShardEntry e;
  if (!j.is_object()) return Error{r.path + ": index is damaged: a shard is not an object"};
  e.name = r.get<std::string>(j, "name");
  e.bytes = r.get<uint64_t>(j, "bytes");
  e.crc32 = r.get<uint32_t>(j, "crc32");
  e.samples = r.get<uint64_t>(j, "samples");
  auto members = r.get<nlohmann::json>(j, "members");
  if (!r.err.empty()) return Error{r.err};
  if (!members.is_array()) return Error{r.path + ": index is damaged: \"members\" is not a list"};
  if (e.name.empty() || e.name.find('/') != std::string::npos || e.name == "." || e.name == "..")
    return Error{r.path + ": index is damaged: bad shard name \"" + e.name + "\""};
  for (const auto& m : members) {
    if (!m.is_object()) return Error{r.path + ": index is damaged: a member is not an object"};
    IndexMember x;
    x.key = r.get<std::string>(m, "key");
    x.tar.name = r.get<std::string>(m, "name");
    x.tar.data_offset = r.get<uint64_t>(m, "offset");
    x.tar.size_bytes = r.get<uint64_t>(m, "size");
    x.tar.crc32 = r.get<uint32_t>(m, "crc32");
    x.source_mtime_ns = r.get<int64_t>(m, "mtime_ns");
    if (!r.err.empty()) return Error{r.err};
    if (x.tar.data_offset > e.bytes || x.tar.size_bytes > e.bytes - x.tar.data_offset)
      return Error{r.path + ": index is damaged: member \"" + x.tar.name + "\" lies outside " + e.name};
    e.members.push_back(std::move(x));
  }
  return e;
}

Result<std::string> slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Error{path + ": cannot open: " + std::strerror(errno)};
  std::string s((std::istreambuf_iterator<char>(f)), {});
  if (f.bad()) return Error{path + ": read failed"};
  return s;
}

}  // namespace

std::string shardEntryJson(const ShardEntry& e) { return entryJson(e).dump(1) + "\n"; }

Result<ShardEntry> parseShardEntry(const std::string& text, const std::string& path) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return Error{path + ": index is damaged: not valid JSON"};
  Reader r{path, {}};
  return entryFrom(j, r);
}

std::string shardIndexJson(const ShardIndex& idx) {
  ordered_json j;
  j["format"] = kFormat;
  j["source"] = idx.source;
  j["shard_bytes"] = idx.shard_bytes;
  j["shuffle_seed"] = idx.shuffle_seed;
  j["samples"] = idx.samples;
  j["data_bytes"] = idx.data_bytes;
  ordered_json shards = ordered_json::array();
  for (const auto& e : idx.shards) shards.push_back(entryJson(e));
  j["shards"] = shards;
  return j.dump(1) + "\n";
}

Result<ShardIndex> readShardIndex(const std::string& path_in) {
  std::string path = path_in;
  std::error_code ec;
  if (fs::is_directory(path, ec)) path = (fs::path(path) / "index.json").string();
  auto text = slurp(path);
  if (!text.ok()) return text.error();
  auto j = nlohmann::json::parse(text.value(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Error{path + ": index is damaged: not valid JSON"};
  Reader r{path, {}};
  if (r.get<std::string>(j, "format") != kFormat)
    return Error{r.err.empty() ? path + ": not a gpudoctor shard index (format is not " + std::string(kFormat) + ")"
                               : r.err};
  ShardIndex idx;
  idx.source = r.get<std::string>(j, "source");
  idx.shard_bytes = r.get<uint64_t>(j, "shard_bytes");
  idx.shuffle_seed = r.get<int64_t>(j, "shuffle_seed");
  idx.samples = r.get<uint64_t>(j, "samples");
  idx.data_bytes = r.get<uint64_t>(j, "data_bytes");
  auto shards = r.get<nlohmann::json>(j, "shards");
  if (!r.err.empty()) return Error{r.err};
  if (!shards.is_array()) return Error{path + ": index is damaged: \"shards\" is not a list"};
  uint64_t samples = 0;
  for (const auto& s : shards) {
    ASSIGN_OR_RETURN(auto e, entryFrom(s, r));
    samples += e.samples;
    idx.shards.push_back(std::move(e));
  }
  if (samples != idx.samples) return Error{path + ": index is damaged: sample counts do not add up"};
  return idx;
}

Status writeFileDurably(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Error{tmp + ": cannot create: " + std::strerror(errno)};
  const char* p = text.data();
  size_t left = text.size();
  std::string err;
  while (left > 0 && err.empty()) {
    ssize_t w = ::write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0)
      err = tmp + ": write failed: " + std::strerror(errno);
    else
      p += w, left -= static_cast<size_t>(w);
  }
  if (err.empty() && ::fsync(fd) != 0) err = tmp + ": fsync failed: " + std::strerror(errno);
  if (::close(fd) != 0 && err.empty()) err = tmp + ": close failed: " + std::strerror(errno);
  if (err.empty() && ::rename(tmp.c_str(), path.c_str()) != 0)
    err = path + ": cannot rename into place: " + std::strerror(errno);
  if (!err.empty()) {
    ::unlink(tmp.c_str());
    return Error{err};
  }
  return {};
}

}  // namespace gpudoctor
