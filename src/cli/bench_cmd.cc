// `gpudoctor bench`: measurements of this host. `bench io PATH` measures the storage under PATH for a
// training input pipeline and, given the rate the GPUs consume, says how many workers that takes.
// `bench gpu` measures this GPU's ceilings and what each compute optimization buys (CUDA builds).
// Each verb registers itself with addBenchX and answers -1 when not chosen.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <string>

#include "analysis/io_paths.h"
#include "cli/commands.h"
#include "cli/json_output.h"
#include "cli/usage.h"
#include "common/atomic_file.h"
#include "common/byte_size.h"
#include "datapipe/storage_bench.h"
#include "diagnosis/io_advice.h"
#include "report/io_report.h"
#include "sources/trace_set.h"
#ifdef GPUDOCTOR_HAVE_CUDA
#include "gpu/pinned_staging.h"
#endif

namespace gpudoctor::cli {

namespace {

struct IoArgs {
  std::string path;
  std::string large = "256M", file_size = "4K", shard_size = "16M";
  uint64_t files = 5000;
  std::vector<int> threads = {1, 2, 4};
  double seconds = 0.25;
  bool big = false, no_cold = false, drop_caches = false, keep = false;
  bool progress = false, quiet = false;
  std::string json;
  double target_samples = 0;
  std::string target_bytes, sample_size;
  bool compressed = false;
  std::string current = "small-files", cache = "cold";
  std::vector<std::string> from_trace;
  int64_t batch = 0;
};

std::atomic<bool> g_interrupted{false};

void onInterruptSignal(int) { g_interrupted = true; }

// The rate the GPUs of the traced job consume (analysis/io_paths.h).
Result<double> targetFromTrace(const std::vector<std::string>& paths, int64_t batch) {
  auto files = expandTracePaths(paths);
  if (!files.ok()) return files.error();
  auto traces = readTraceSet(files.value());
  if (!traces.ok()) return traces.error();
  auto run = analyzeRun(traces.value(), {});
  if (!run.ok()) return run.error();
  double rate = consumedSamplesPerSecond(run.value(), batch);
  if (rate <= 0) return Error{paths.front() + ": no step time to derive a rate from"};
  return rate;
}

int runIo(IoArgs a) {
  StorageBenchOptions opt;
  opt.dir = a.path;
  if (a.big) {
    // The bigger run: the 100,000 small files and a file larger than most page-cache slack.
    if (a.large == "256M") a.large = "1G";
    if (a.files == 5000) a.files = 100000;
    if (a.seconds == 0.25) a.seconds = 1.0;
  }
  for (auto [flag, text, dst] : {std::tuple{"--large-size", &a.large, &opt.large_file_bytes},
                                 std::tuple{"--file-size", &a.file_size, &opt.small_file_bytes},
                                 std::tuple{"--shard-size", &a.shard_size, &opt.shard_bytes}}) {
    auto v = parseByteSize(*text);
    if (!v.ok()) return fail(std::string(flag) + ": " + v.error().message, kUsage);
    *dst = v.value();
  }
  if (opt.large_file_bytes < (4u << 20)) return fail("--large-size must be at least 4M", kUsage);
  if (opt.small_file_bytes == 0) return fail("--file-size must be at least 1 byte", kUsage);
  if (a.files < 10) return fail("--files must be at least 10", kUsage);
  if (opt.shard_bytes < (64u << 10)) return fail("--shard-size must be at least 64K", kUsage);
  opt.small_files = a.files;
  opt.threads = a.threads;
  std::sort(opt.threads.begin(), opt.threads.end());
  opt.threads.erase(std::unique(opt.threads.begin(), opt.threads.end()), opt.threads.end());
  opt.seconds_per_cell = a.seconds;
  opt.cold = !a.no_cold;
  opt.drop_caches = a.drop_caches;
  opt.keep = a.keep;
  if (a.current != "small-files" && a.current != "shards")
    return fail("--current must be small-files or shards", kUsage);
  if (a.cache != "cold" && a.cache != "warm") return fail("--cache must be cold or warm", kUsage);
  if (a.cache == "cold" && a.no_cold) a.cache = "warm";
  // The target, from a flag or a trace, checked before minutes of measuring.
  double sample_bytes = static_cast<double>(opt.small_file_bytes);
  if (!a.sample_size.empty()) {
    auto v = parseByteSize(a.sample_size);
    if (!v.ok() || v.value() == 0)
      return fail("--sample-size: " + (v.ok() ? std::string("must be positive") : v.error().message), kUsage);
    sample_bytes = static_cast<double>(v.value());
  }
  double target = a.target_samples;
  if (!a.target_bytes.empty()) {
    auto v = parseByteSize(a.target_bytes);
    if (!v.ok()) return fail("--target-bytes: " + v.error().message, kUsage);
    target = static_cast<double>(v.value()) / sample_bytes;
  }
  if (!a.from_trace.empty()) {
    if (a.batch <= 0) return fail("--from-trace needs --batch-size (samples per step per GPU)", kUsage);
    auto t = targetFromTrace(a.from_trace, a.batch);
    if (!t.ok()) return fail(t.error().message, kBadInput);
    target = t.value();
  }
#ifdef GPUDOCTOR_HAVE_CUDA
  StagingAllocator staging = pinnedStaging();
  opt.staging = &staging;
#endif
  bool show = !a.quiet && (a.progress || ::isatty(STDERR_FILENO));
  if (show)
    opt.progress = [tty = ::isatty(STDERR_FILENO) != 0](const std::string& step, int done, int total) {
      // One line redrawn on a terminal; plain lines in a log.
      if (tty)
        std::fprintf(stderr, "\r\033[K[bench io %d/%d] %s%s", done, total, step.c_str(), done == total ? "\n" : "");
      else
        std::fprintf(stderr, "[bench io %d/%d] %s\n", done, total, step.c_str());
      std::fflush(stderr);
    };
  // Ctrl-C stops between measurements so the scratch files under PATH are removed, not left behind.
  struct sigaction sa {};
  sa.sa_handler = onInterruptSignal;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  opt.cancel = &g_interrupted;
  auto r = runStorageBench(opt);
  if (!r.ok()) {
    if (show && ::isatty(STDERR_FILENO)) std::fputc('\n', stderr);
    return fail(r.error().message, g_interrupted ? kInterrupted : kBadInput);
  }
  std::unique_ptr<IoAdvice> advice;
  if (target > 0) {
    const auto& res = r.value();
    std::vector<IoPath> paths;
    for (const auto& p : ioReadPaths(res, a.current, a.cache))
      paths.push_back(
          {p.name, p.fix, p.per_worker_samples_per_s, p.best_samples_per_s, p.best_threads, p.max_threads_measured});
    IoTarget t{target, sample_bytes, a.compressed ? res.inflate_bytes_per_s : 0,
               a.compressed ? res.compression_ratio : 1, res.cpus};
    advice = std::make_unique<IoAdvice>(adviseIo(paths, t));
  }
  std::string json = a.json.empty() ? "" : renderIoBenchJson(r.value(), advice.get());
  std::string text = jsonOnly(a.json) ? "" : renderIoBenchText(r.value(), advice.get());
  if (std::string err = writeOutputs(a.json, text, json); !err.empty()) return fail(err, kBadInput);
  return 0;
}

std::function<int()> addBenchIo(CLI::App* bench) {
  auto a = std::make_shared<IoArgs>();
  auto* io = bench->add_subcommand(
      "io",
      "What the storage under PATH delivers to a training input pipeline. Writes scratch files below PATH (one large "
      "file, many small files, the small files packed into shards) and removes them; measures sequential and random "
      "reads (block sizes x threads; buffered, O_DIRECT, mmap), small files against the large file (and the "
      "open+stat cost), the shard reader (mmap + prefetch threads), warm and cold page cache, and gzip inflate. "
      "Given a target rate (--target-samples, --target-bytes or --from-trace), says how many DataLoader workers each "
      "way of reading needs, whether the storage sustains it, and which fix buys most. The default run takes "
      "well under a minute; --big measures 100,000 files and a 1 GiB file.");
  io->add_option("PATH", a->path, "A folder on the storage to measure (needs a few hundred MB free)")->required();
  io->add_option("--large-size", a->large, "Size of the large file (K/M/G)")->capture_default_str()->group("Size");
  io->add_option("--files", a->files, "Number of small files")->capture_default_str()->group("Size");
  io->add_option("--file-size", a->file_size, "Size of each small file (a sample)")
      ->capture_default_str()
      ->group("Size");
  io->add_option("--shard-size", a->shard_size, "Shard size when the small files are packed")
      ->capture_default_str()
      ->group("Size");
  io->add_option("--threads", a->threads, "Reader thread counts to measure")
      ->capture_default_str()
      ->delimiter(',')
      ->check(CLI::Range(1, 256))
      ->group("Size");
  io->add_option("--seconds", a->seconds, "Time cap of each large-file measurement")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 60.0))
      ->group("Size");
  io->add_flag("--big", a->big, "Bigger run: 100,000 files, a 1 GiB file, 1 s per measurement")->group("Size");
  io->add_flag("--no-cold", a->no_cold, "Skip the cold-cache measurements")->group("Cache");
  io->add_flag("--drop-caches", a->drop_caches,
               "Empty the cache with /proc/sys/vm/drop_caches (root; affects the whole machine) instead of "
               "posix_fadvise on the scratch files; drops directory and inode caches too")
      ->group("Cache");
  io->add_option("--target-samples", a->target_samples, "Samples/s the GPUs consume (all GPUs reading this storage)")
      ->check(positive())
      ->group("Target");
  io->add_option("--target-bytes", a->target_bytes, "Or bytes/s the GPUs consume (K/M/G per second)")->group("Target");
  io->add_option("--sample-size", a->sample_size, "Bytes per sample for the target (default: --file-size)")
      ->group("Target");
  io->add_option("--from-trace", a->from_trace,
                 "Or derive the target from profiler traces of the job (with --batch-size)")
      ->type_name("TRACE")
      ->group("Target");
  io->add_option("--batch-size", a->batch, "Samples per step per GPU, for --from-trace")
      ->check(positive())
      ->group("Target");
  io->add_flag("--compressed", a->compressed, "Samples are gzip-compressed: add the measured inflate cost per sample")
      ->group("Target");
  io->add_option("--current", a->current, "How the job reads today: small-files or shards")
      ->capture_default_str()
      ->group("Target");
  io->add_option("--cache", a->cache,
                 "Page cache the job sees today: cold (dataset larger than RAM, first epoch) or warm")
      ->capture_default_str()
      ->group("Target");
  addJsonOption(io, &a->json, "every figure");
  io->add_flag("--progress", a->progress, "Progress on stderr even when it is not a terminal");
  addQuiet(io, &a->quiet);
  io->add_flag("--keep", a->keep, "Keep the scratch files (PATH/.gpudoctor-bench-io-PID)");
  return [a, io] {
    if (!io->parsed()) return -1;
    if ((!a->target_bytes.empty()) + (a->target_samples > 0) + !a->from_trace.empty() > 1)
      return fail("give one of --target-samples, --target-bytes and --from-trace, not both", kUsage);
    if (a->batch != 0 && a->from_trace.empty())
      return fail("--batch-size is for --from-trace: give the traces", kUsage);
    return runIo(*a);
  };
}

}  // namespace

std::function<int()> addBench(CLI::App& app) {
  auto* bench = app.add_subcommand(
      "bench", "Measure this host: io (storage for the input pipeline), gpu (ceilings and optimizations)");
  bench->require_subcommand(1);
  std::vector<std::function<int()>> verbs = {addBenchIo(bench), addBenchGpu(bench)};
  return [verbs] {
    for (const auto& v : verbs)
      if (int rc = v(); rc >= 0) return rc;
    return kUsage;
  };
}

}  // namespace gpudoctor::cli
