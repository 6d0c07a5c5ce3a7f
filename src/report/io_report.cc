#include "report/io_report.h"

#include <cmath>

#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include <fmt/format.h>

#include "common/thousands.h"
#include "report/text.h"

namespace gpudoctor {

namespace {

std::string sizeText(uint64_t b) {
  if (b >= (1ull << 30) && b % (1ull << 30) == 0) return std::to_string(b >> 30) + "G";
  if (b >= (1ull << 20) && b % (1ull << 20) == 0) return std::to_string(b >> 20) + "M";
  if (b >= 1024 && b % 1024 == 0) return std::to_string(b >> 10) + "K";
  return std::to_string(b);
}

using Key = std::tuple<int, std::string, std::string, uint64_t, int>;

int patternOrder(const std::string& p) {
  return p == "sequential" ? 0 : p == "random" ? 1 : p == "small files" ? 2 : 3;
}

}  // namespace

std::string renderIoBenchText(const StorageBenchResult& r, const IoAdvice* advice) {
  std::string o;
  const auto& op = r.options;
  o += fmt::format("gpudoctor bench io {} ({}, {} cores): one {} file, {} files of {}, shards of {}; {:.1f} s\n", r.dir,
                   r.filesystem, r.cpus, sizeText(op.large_file_bytes),
                   groupThousands(static_cast<double>(op.small_files)), sizeText(op.small_file_bytes),
                   sizeText(op.shard_bytes), r.seconds);
  if (op.cold && r.cold_resident_share > 0.1)
    o += wrapText(fmt::format("cold cache NOT achieved: {}, yet {:.0f} % of the scratch data stayed cached (mincore); "
                              "the cold columns are (partly) warm. A file system in memory (tmpfs) cannot be emptied; "
                              "elsewhere try --drop-caches as root.",
                              r.cold_method, 100 * r.cold_resident_share),
                  "", textWidth());
  else if (op.cold)
    o += wrapText(fmt::format("cold cache: {}; afterwards {:.1f} % of the scratch data was still cached (mincore).",
                              r.cold_method, 100 * std::max(0.0, r.cold_resident_share)),
                  "", textWidth());
  else
    o += "cold cache: not measured (--no-cold)\n";
  o += "O_DIRECT: " + (r.o_direct ? std::string("supported (never cached: shown under cold)") : r.o_direct_note) + "\n";
  o += "shard reader staging buffers: " + (r.staging_kind.empty() ? std::string("pageable") : r.staging_kind) + "\n\n";
  // Warm and cold side by side per cell.
  std::map<Key, std::pair<const ReadFigure*, const ReadFigure*>> rows;
  for (const auto& f : r.figures) {
    auto& slot = rows[{patternOrder(f.pattern), f.pattern, f.method, f.block_bytes, f.threads}];
    (f.cache == "warm" ? slot.first : slot.second) = &f;
  }
  // 86 columns, or 76 where the report is narrower (less spacing, ops/s in 9 columns).
  const bool narrow = textWidth() < 86;
  const int pw = narrow ? 11 : 12, mw = narrow ? 12 : 13, bw = narrow ? 5 : 6, tw = narrow ? 3 : 4,
            ow = narrow ? 9 : 11;
  const char* bar = narrow ? " |" : " | ";
  o += fmt::format("{:<{}} {:<{}} {:>{}} {:>{}}{}{:>9} {:>{}}{}{:>9} {:>{}}\n", "pattern", pw, "method", mw, "block",
                   bw, "thr", tw, bar, "warm GB/s", "ops/s", ow, bar, "cold GB/s", "ops/s", ow);
  int last = -1;
  for (const auto& [k, v] : rows) {
    if (last != -1 && std::get<0>(k) != last) o += "\n";
    last = std::get<0>(k);
    auto cell = [&](const ReadFigure* f) {
      return f ? fmt::format("{:>9.3f} {:>{}}", f->gbps(), groupThousands(f->opsPerSecond()), ow)
               : fmt::format("{:>9} {:>{}}", "-", "-", ow);
    };
    o += fmt::format("{:<{}} {:<{}} {:>{}} {:>{}}{}{}{}{}\n", std::get<1>(k), pw, std::get<2>(k), mw,
                     sizeText(std::get<3>(k)), bw, std::get<4>(k), tw, bar, cell(v.first), bar, cell(v.second));
  }
  o += "\nops/s: reads/s for the large file, files/s for small files, samples/s for shards. GB/s = 1e9 bytes/s.\n";
  o += fmt::format("open+stat+close of a small file (metadata cached): {:.1f} µs\n", r.open_stat_close_ns / 1e3);
  o += fmt::format("packing the small files into shards: {:.2f} s\n", r.pack_seconds);
  o += fmt::format("gzip (zlib) inflate: {:.0f} MB/s of output per core (this data compresses {:.2f}:1 at level 6)\n",
                   r.inflate_bytes_per_s / 1e6, r.compression_ratio);
  if (advice) {
    o += "\nWorkers needed (" + advice->summary + ")\n";
    for (const auto& p : advice->paths) o += wrapText(p.verdict, "  ", textWidth());
    if (!advice->fixes.empty()) {
      o += "Fixes, best first:\n";
      int i = 1;
      for (const auto& f : advice->fixes) o += wrapText(std::to_string(i++) + ". " + f, "  ", textWidth());
    }
  }
  return fitLines(o);  // the lines of prose wrapped at the report width; the table fits
}

std::string renderIoBenchJson(const StorageBenchResult& r, const IoAdvice* advice) {
  nlohmann::ordered_json j;
  const auto& op = r.options;
  j["tool"] = "gpudoctor bench io";
  j["schema_version"] = 1;
  j["dir"] = r.dir;
  j["filesystem"] = r.filesystem;
  j["cpus"] = r.cpus;
  j["seconds"] = r.seconds;
  j["setup"] = {{"large_file_bytes", op.large_file_bytes}, {"small_files", op.small_files},
                {"small_file_bytes", op.small_file_bytes}, {"shard_bytes", op.shard_bytes},
                {"seconds_per_cell", op.seconds_per_cell}, {"threads", op.threads}};
  j["cold_cache"] = {{"measured", op.cold}, {"method", r.cold_method}, {"resident_share_after", r.cold_resident_share}};
  j["o_direct"] = {{"supported", r.o_direct}, {"note", r.o_direct_note}};
  j["staging"] = r.staging_kind;
  j["open_stat_close_ns"] = static_cast<int64_t>(std::llround(r.open_stat_close_ns));  // a mean, in whole ns
  j["pack_seconds"] = r.pack_seconds;
  j["inflate_bytes_per_s"] = r.inflate_bytes_per_s;
  j["compression_ratio"] = r.compression_ratio;
  auto figs = nlohmann::ordered_json::array();
  for (const auto& f : r.figures)
    figs.push_back({{"pattern", f.pattern},
                    {"method", f.method},
                    {"cache", f.cache},
                    {"block_bytes", f.block_bytes},
                    {"threads", f.threads},
                    {"bytes", f.bytes},
                    {"ops", f.ops},
                    {"seconds", f.seconds},
                    {"gbps", f.gbps()},
                    {"ops_per_s", f.opsPerSecond()}});
  j["figures"] = figs;
  if (advice) {
    nlohmann::ordered_json a;
    a["target"] = {{"samples_per_s", advice->target.samples_per_s},
                   {"sample_bytes", advice->target.sample_bytes},
                   {"decompress_bytes_per_s", advice->target.decompress_bytes_per_s},
                   {"compression_ratio", advice->target.compression_ratio},
                   {"cpus", advice->target.cpus}};
    auto paths = nlohmann::ordered_json::array();
    for (const auto& p : advice->paths)
      paths.push_back({{"name", p.path.name},
                       {"fix", p.path.fix},
                       {"per_worker_samples_per_s", p.per_worker_samples_per_s},
                       {"best_samples_per_s", p.path.best_samples_per_s},
                       {"best_threads", p.path.best_threads},
                       {"workers", p.workers},
                       {"sustainable", p.sustainable},
                       {"beyond_measured", p.beyond_measured},
                       {"headroom", p.headroom},
                       {"verdict", p.verdict}});
    a["paths"] = paths;
    a["fixes"] = advice->fixes;
    a["summary"] = advice->summary;
    j["advice"] = a;
  }
  return j.dump(2) + "\n";
}

}  // namespace gpudoctor
