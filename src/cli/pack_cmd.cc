// `gpudoctor pack SRC_DIR OUT_DIR`: many small sample files into WebDataset tar shards with an index.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/usage.h"
#include "common/byte_size.h"
#include "datapipe/packer.h"

namespace gpudoctor::cli {

namespace {

struct PackArgs {
  std::string src, out;
  std::string shard_size = "256M";
  uint64_t max_samples = 0;
  int64_t shuffle = -1;
  int threads = 2;
  std::string prefix = "shard";
  bool quiet = false, progress = false, skip_bad = false, replace = false;
  int test_delay_ms = 0;
};

int runPack(const PackArgs& a) {
  auto size = parseByteSize(a.shard_size);
  if (!size.ok()) return fail("--shard-size: " + size.error().message, kUsage);
  if (size.value() < 1024) return fail("--shard-size must be at least 1K", kUsage);
  if (a.prefix.empty() || a.prefix.find('/') != std::string::npos)
    return fail("--prefix must be a plain file name", kUsage);
  PackOptions opt;
  opt.shard_bytes = size.value();
  opt.max_samples_per_shard = a.max_samples;
  opt.shuffle_seed = a.shuffle;
  opt.threads = a.threads;
  opt.prefix = a.prefix;
  opt.delay_ms_per_shard = a.test_delay_ms;
  opt.skip_bad = a.skip_bad;
  opt.replace = a.replace;
  bool show = !a.quiet && (a.progress || ::isatty(STDERR_FILENO));
  if (show)
    opt.on_shard = [tty = ::isatty(STDERR_FILENO) != 0](uint64_t done, uint64_t total, uint64_t bytes) {
      // One line redrawn on a terminal; plain lines in a log.
      std::fprintf(stderr, "%s[pack] %llu/%llu shards, %.1f MiB%s", tty ? "\r" : "",
                   static_cast<unsigned long long>(done), static_cast<unsigned long long>(total), bytes / 1048576.0,
                   !tty || done == total ? "\n" : "");
    };
  auto r = packDirectory(a.src, a.out, opt);
  if (!r.ok()) {
    if (show && ::isatty(STDERR_FILENO)) std::fputc('\n', stderr);
    return fail(r.error().message, kBadInput);
  }
  const auto& s = r.value();
  if (!a.quiet)
    std::printf("%s\n",
                fmt::format("packed {} samples ({} files, {:.1f} MiB) into {} shard{} ({:.1f} MiB) in {:.2f} s: "
                            "{} written, {} kept from an earlier run; index {}/index.json",
                            s.samples, s.files, s.data_bytes / 1048576.0, s.shards, s.shards == 1 ? "" : "s",
                            s.shard_bytes_total / 1048576.0, s.seconds, s.shards_written, s.shards_kept, a.out)
                    .c_str());
  if (!s.skipped.empty()) {
    // Always said (also with -q): files the user has not got in the shards.
    std::fprintf(stderr, "gpudoctor pack: left out %zu file%s that cannot be packed:\n", s.skipped.size(),
                 s.skipped.size() == 1 ? "" : "s");
    for (size_t i = 0; i < s.skipped.size() && i < 10; ++i) std::fprintf(stderr, "  %s\n", s.skipped[i].c_str());
    if (s.skipped.size() > 10) std::fprintf(stderr, "  (+%zu more)\n", s.skipped.size() - 10);
  }
  if (!a.quiet && s.stale_removed)
    std::printf("removed %llu files of shards left by an earlier pack with other settings\n",
                static_cast<unsigned long long>(s.stale_removed));
  return 0;
}

}  // namespace

std::function<int()> addPack(CLI::App& app) {
  auto a = std::make_shared<PackArgs>();
  auto* cmd = app.add_subcommand(
      "pack",
      "Pack a folder of many small sample files into tar shards (WebDataset conventions: the files of one sample, "
      "same path up to the first dot of the basename, stay together) plus OUT_DIR/index.json for random access. "
      "Deterministic order (sorted, or --shuffle SEED); parallel; every shard is written as NAME.tar.tmp, "
      "fsync'ed and renamed, so a shard is only visible complete; running the same command again after an "
      "interruption keeps the shards that verify (crc32) and writes the rest. A source file that changes while "
      "it is packed is an error naming it. GNU tar reads the shards.");
  cmd->add_option("SRC_DIR", a->src, "Folder of samples (walked recursively)")->required();
  cmd->add_option("OUT_DIR", a->out, "Folder for the shards and index.json (created; not inside SRC_DIR)")->required();
  cmd->add_option("--shard-size", a->shard_size, "Target shard size (K/M/G); a larger sample gets a shard alone")
      ->capture_default_str();
  cmd->add_option("--max-samples", a->max_samples, "At most this many samples per shard (0: no limit)")
      ->check(wholeNumber());
  cmd->add_option("--shuffle", a->shuffle, "Shuffle the sample order with this seed (same seed, same shards)")
      ->check(wholeNumber())
      ->type_name("SEED");
  cmd->add_option("--threads", a->threads, "Shards written in parallel")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  cmd->add_option("--prefix", a->prefix, "Shard names: PREFIX-000000.tar, ...")->capture_default_str();
  addQuiet(cmd, &a->quiet);
  cmd->add_flag("--skip-bad", a->skip_bad,
                "Leave out files that cannot be packed (dangling links, non-UTF-8 names, ...) and list them");
  cmd->add_flag("--replace", a->replace, "Replace a pack in OUT_DIR made from another source or with other settings");
  cmd->add_flag("--progress", a->progress, "Show progress on stderr even when it is not a terminal");
  cmd->add_option("--test-delay-ms", a->test_delay_ms, "Testing: pause after each shard")->group("");
  return [a, cmd] {
    if (!cmd->parsed()) return -1;
    return runPack(*a);
  };
}

}  // namespace gpudoctor::cli
