// `gpudoctor nccl bench`: starts one worker process per GPU (itself, re-executed), or joins a job
// launched by torchrun / mpirun / srun, and prints nccl-tests' table from rank 0.
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>
#include <memory>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "analysis/nccl_tune.h"
#include "common/atomic_file.h"
#include "common/byte_size.h"
#include "common/launch_env.h"
#include "gpu/nccl_bench.h"

namespace gpudoctor::cli {

namespace {

// The sweep both `bench` and `tune` take (nccl-tests' flags).
struct SweepArgs {
  int gpus = 0;
  std::string min_bytes = "8", max_bytes = "128M", collectives = "allreduce", dtype = "float";
  double factor = 2;
  int iters = 20, warmup = 5;
};

void addSweepOptions(CLI::App* cmd, SweepArgs& a, const std::string& collectives_help) {
  cmd->add_option("-g,--gpus", a.gpus, "GPUs on this node (default: all visible)");
  cmd->add_option("-b,--minbytes", a.min_bytes, "Smallest size (8, 64K, 128M, 8G)")->capture_default_str();
  cmd->add_option("-e,--maxbytes", a.max_bytes, "Largest size")->capture_default_str();
  cmd->add_option("-f,--stepfactor", a.factor, "Size multiplier")->capture_default_str();
  cmd->add_option("-c,--collectives", a.collectives, collectives_help)->capture_default_str();
  cmd->add_option("-d,--dtype", a.dtype, "float, half, bfloat16, int32, double")->capture_default_str();
  cmd->add_option("-n,--iters", a.iters, "Timed iterations per size")->capture_default_str()->check(CLI::Range(1, 100000));
  cmd->add_option("-w,--warmup", a.warmup, "Warm-up iterations per size")->capture_default_str()->check(CLI::Range(0, 100000));
}

struct BenchArgs : SweepArgs {
  bool no_check = false, json = false, out_of_place_only = false;
  int worker_rank = -1, worker_nranks = -1;
};

std::string hex(const nccl::UniqueId& id) {
  std::string s;
  for (unsigned char c : id.internal) s += fmt::format("{:02x}", c);
  return s;
}
bool unhex(const std::string& s, nccl::UniqueId& id) {
  if (s.size() != 2 * sizeof id.internal) return false;
  for (size_t i = 0; i < sizeof id.internal; ++i) id.internal[i] = static_cast<char>(std::stoi(s.substr(2 * i, 2), nullptr, 16));
  return true;
}

int localGpuCount() {
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES"); v && *v) {
    int n = 1;
    for (const char* p = v; *p; ++p) n += *p == ',';
    return n;
  }
  int n = 0;
  while (std::filesystem::exists("/dev/nvidia" + std::to_string(n))) ++n;
  return n;
}

// The unique id from rank 0 to the others over TCP (rank 0's host and port from launchFromEnv),
// for jobs that torchrun, mpirun or srun started: no launcher of our own.
Status exchangeId(const LaunchEnv& l, nccl::UniqueId& id) {
  const int rank = l.rank, nranks = l.world_size;
  const std::string port_s = std::to_string(l.id_port);
  const char* port = port_s.c_str();
  const char* addr = l.master_addr.c_str();
  if (rank == 0) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(std::atoi(port)));
    a.sin_addr.s_addr = INADDR_ANY;
    if (bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(s, 1024) != 0)
      return Error{fmt::format("rank 0 cannot listen on port {}: {}", port, std::strerror(errno))};
    // Never wait forever for a rank that did not start: 120 s for all of them, as the others wait.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    for (int served = 1; served < nranks; ++served) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd pfd{s, POLLIN, 0};
      if (left.count() <= 0 || poll(&pfd, 1, static_cast<int>(left.count())) <= 0) {
        close(s);
        return Error{fmt::format("rank 0: only {} of {} ranks asked for the NCCL id within 120 s", served, nranks)};
      }
      int c = accept(s, nullptr, nullptr);
      if (c < 0) return Error{std::string("accept failed: ") + std::strerror(errno)};
      ssize_t w = write(c, id.internal, sizeof id.internal);
      close(c);
      if (w != static_cast<ssize_t>(sizeof id.internal)) return Error{"sending the NCCL id failed"};
    }
    close(s);
    return {};
  }
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(addr, port, &hints, &res) != 0 || !res) return Error{std::string("cannot resolve MASTER_ADDR ") + addr};
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  for (;;) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(s, res->ai_addr, res->ai_addrlen) == 0) {
      size_t got = 0;
      while (got < sizeof id.internal) {
        ssize_t r = read(s, id.internal + got, sizeof id.internal - got);
        if (r <= 0) break;
        got += static_cast<size_t>(r);
      }
      close(s);
      freeaddrinfo(res);
      if (got != sizeof id.internal) return Error{"short read of the NCCL id from rank 0"};
      return {};
    }
    close(s);
    if (std::chrono::steady_clock::now() > deadline) {
      freeaddrinfo(res);
      return Error{fmt::format("rank {}: rank 0 at {}:{} did not answer within 120 s", rank, addr, port)};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

std::string table(const std::vector<NcclBenchRow>& rows, int nranks, bool in_place) {
  std::string o = fmt::format("# gpudoctor nccl bench: {} ranks\n", nranks);
  o += fmt::format("#{:>53}   {:^36}{}\n", "", "out-of-place", in_place ? "   in-place" : "");
  o += fmt::format("# {:>12} {:>12} {:>8} {:>6} {:>6} {:>9} {:>7} {:>7} {:>6}", "size", "count", "type", "redop", "root",
                   "time", "algbw", "busbw", "#wrong");
  if (in_place) o += fmt::format(" {:>9} {:>7} {:>7} {:>6}", "time", "algbw", "busbw", "#wrong");
  o += fmt::format("\n# {:>12} {:>12} {:>8} {:>6} {:>6} {:>9} {:>7} {:>7} {:>6}\n", "(B)", "(elements)", "", "", "", "(us)",
                   "(GB/s)", "(GB/s)", "");
  std::string coll;
  for (const auto& r : rows) {
    if (r.collective != coll) {
      coll = r.collective;
      o += "# " + coll + "\n";
    }
    o += fmt::format("  {:>12} {:>12} {:>8} {:>6} {:>6} {:>9.2f} {:>7.2f} {:>7.2f} {:>6}", r.bytes, r.count, r.dtype,
                     r.redop, r.root, r.time_us[0], r.algbw[0], r.busbw[0], r.wrong[0]);
    if (in_place) {
      if (r.time_us[1] > 0)
        o += fmt::format(" {:>9.2f} {:>7.2f} {:>7.2f} {:>6}", r.time_us[1], r.algbw[1], r.busbw[1], r.wrong[1]);
      else
        o += fmt::format(" {:>9} {:>7} {:>7} {:>6}", "n/a", "", "", "");
    }
    o += "\n";
  }
  int64_t wrong = 0;
  double bus_sum = 0;
  int n = 0;
  for (const auto& r : rows) {
    wrong += r.wrong[0] + r.wrong[1];
    bus_sum += r.busbw[0];
    ++n;
  }
  o += fmt::format("# Out of bounds values : {} {}\n# Avg bus bandwidth    : {:.3f}\n", wrong, wrong ? "FAILED" : "OK",
                   n ? bus_sum / n : 0.0);
  return o;
}

std::string json(const std::vector<NcclBenchRow>& rows, int nranks) {
  nlohmann::ordered_json j;
  j["tool"] = "gpudoctor nccl bench";
  j["ranks"] = nranks;
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (const auto& r : rows)
    arr.push_back({{"collective", r.collective}, {"bytes", r.bytes}, {"count", r.count}, {"dtype", r.dtype},
                   {"redop", r.redop}, {"root", r.root},
                   {"out_of_place", {{"time_us", r.time_us[0]}, {"algbw_gbps", r.algbw[0]}, {"busbw_gbps", r.busbw[0]}, {"wrong", r.wrong[0]}}},
                   {"in_place", {{"time_us", r.time_us[1]}, {"algbw_gbps", r.algbw[1]}, {"busbw_gbps", r.busbw[1]}, {"wrong", r.wrong[1]}}}});
  j["results"] = arr;
  return j.dump(1) + "\n";
}

Result<NcclBenchOptions> options(const BenchArgs& a) {
  NcclBenchOptions o;
  auto lo = parseByteSize(a.min_bytes), hi = parseByteSize(a.max_bytes);
  if (!lo.ok()) return Error{"-b: " + lo.error().message};
  if (!hi.ok()) return Error{"-e: " + hi.error().message};
  constexpr uint64_t kMax = uint64_t{1} << 50;
  if (lo.value() > kMax || hi.value() > kMax) return Error{"-b/-e: sizes above 1 PiB are not benchmarks"};
  o.min_bytes = std::max<int64_t>(1, static_cast<int64_t>(lo.value()));
  o.max_bytes = static_cast<int64_t>(hi.value());
  if (o.max_bytes < o.min_bytes) return Error{"-e must not be below -b"};
  if (a.factor <= 1) return Error{"-f must be above 1"};
  o.factor = a.factor;
  o.dtype = a.dtype;
  o.iters = a.iters;
  o.warmup = a.warmup;
  o.check = !a.no_check;
  o.in_place = !a.out_of_place_only;
  static const std::vector<std::string> kAll = {"allreduce", "allgather", "reducescatter", "broadcast", "reduce", "alltoall", "sendrecv"};
  o.collectives.clear();
  std::string list = a.collectives == "all" ? "allreduce,allgather,reducescatter,broadcast,reduce,alltoall,sendrecv" : a.collectives;
  for (size_t p = 0; p <= list.size();) {
    size_t q = list.find(',', p);
    if (q == std::string::npos) q = list.size();
    std::string c = list.substr(p, q - p);
    if (std::find(kAll.begin(), kAll.end(), c) == kAll.end()) return Error{"-c: unknown collective \"" + c + "\""};
    o.collectives.push_back(c);
    p = q + 1;
  }
  return o;
}

int worker(const BenchArgs& a, int rank, int nranks, int device, const nccl::UniqueId& id) {
  auto o = options(a);
  if (!o.ok()) {
    std::fprintf(stderr, "gpudoctor: error: %s\n", o.error().message.c_str());
    return 2;
  }
  auto rows = runNcclBench(o.value(), rank, nranks, device, id);
  if (!rows.ok()) {
    std::fprintf(stderr, "gpudoctor: error: %s\n", rows.error().message.c_str());
    return 1;
  }
  if (rank == 0) {
    std::string out = a.json ? json(rows.value(), nranks) : table(rows.value(), nranks, o.value().in_place);
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
  }
  int64_t wrong = 0;
  for (const auto& r : rows.value()) wrong += r.wrong[0] + r.wrong[1];
  return wrong ? 3 : 0;
}

int runBench(const BenchArgs& a, const std::vector<std::string>& argv) {
  auto bad = [](const std::string& m, int code) {
    std::fprintf(stderr, "gpudoctor: error: %s\n", m.c_str());
    return code;
  };
  if (auto o = options(a); !o.ok()) return bad(o.error().message, 2);
  auto api = nccl::load();
  if (!api.ok()) return bad(api.error().message, 1);
  // A worker this process started.
  if (a.worker_rank >= 0) {
    nccl::UniqueId id{};
    const char* h = std::getenv("GPUDOCTOR_NCCL_ID");
    if (!h || !unhex(h, id)) return bad("worker started without GPUDOCTOR_NCCL_ID", 2);
    return worker(a, a.worker_rank, a.worker_nranks, a.worker_rank, id);
  }
  // Started by torchrun / mpirun / srun: join that job.
  if (a.gpus == 0) {
    auto launch = launchFromEnv([](const char* k) { return std::getenv(k); });
    if (!launch.ok()) return bad(launch.error().message, 2);
    if (const LaunchEnv& l = launch.value(); l.joined) {
      int device = l.local_rank >= 0 ? l.local_rank : l.rank % std::max(1, localGpuCount());
      nccl::UniqueId id{};
      if (l.rank == 0 && api.value()->GetUniqueId(&id) != 0) return bad("ncclGetUniqueId failed", 1);
      if (Status s = exchangeId(l, id); !s.ok()) return bad(s.message(), 1);
      return worker(a, l.rank, l.world_size, device, id);
    }
  }
  // One process per local GPU, started here.
  int n = a.gpus > 0 ? a.gpus : localGpuCount();
  if (n < 1) return bad("no GPU found (no /dev/nvidia0; set -g or CUDA_VISIBLE_DEVICES)", 1);
  nccl::UniqueId id{};
  if (nccl::Result r = api.value()->GetUniqueId(&id); r != 0)
    return bad(std::string("ncclGetUniqueId failed: ") + api.value()->GetErrorString(r), 1);
  std::string idhex = hex(id);
  std::vector<pid_t> kids;
  for (int r = 0; r < n; ++r) {
    pid_t pid = fork();
    if (pid < 0) return bad(std::string("fork failed: ") + std::strerror(errno), 1);
    if (pid == 0) {
      setenv("GPUDOCTOR_NCCL_ID", idhex.c_str(), 1);
      std::vector<std::string> args = argv;
      args.push_back("--worker-rank");
      args.push_back(std::to_string(r));
      args.push_back("--worker-nranks");
      args.push_back(std::to_string(n));
      std::vector<char*> cargs;
      for (auto& s : args) cargs.push_back(s.data());
      cargs.push_back(nullptr);
      execv("/proc/self/exe", cargs.data());
      _exit(127);
    }
    kids.push_back(pid);
  }
  int rc = 0;
  for (size_t k = 0; k < kids.size(); ++k) {
    int st = 0;
    waitpid(kids[k], &st, 0);
    if (WIFSIGNALED(st)) {
      std::fprintf(stderr, "gpudoctor: error: rank %zu died of signal %d\n", k, WTERMSIG(st));
      rc = std::max(rc, 1);
    } else if (WEXITSTATUS(st)) {
      rc = std::max(rc, WEXITSTATUS(st));
    }
  }
  return rc;
}

struct TuneArgs : SweepArgs {
  TuneArgs() {
    max_bytes = "256M";
    factor = 4;
  }
  std::string out = "gpudoctor-tuner.csv";
  std::string algos = "default,ring,tree", protos = "default,ll,ll128,simple", ctas = "4,8,16,32";
  int repeats = 5;
  bool json = false, no_validate = false;
  std::string plugin;  // libnccl-tuner-gpudoctor.so; default: beside the binary
};

std::vector<std::string> splitList(const std::string& s) {
  std::vector<std::string> v;
  for (size_t p = 0; p <= s.size();) {
    size_t q = s.find(',', p);
    if (q == std::string::npos) q = s.size();
    if (q > p) v.push_back(s.substr(p, q - p));
    p = q + 1;
  }
  return v;
}

std::string shellQuote(const std::string& v) {
  std::string q = "'";
  for (char c : v) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

using SizeTimes = std::map<NcclSizeKey, std::vector<double>>;

// One fresh `nccl bench` process with the given environment assignments (NCCL caches CTA counts per
// process and reads ALGO/PROTO at communicator init): its out-of-place times per collective and
// size go into `into`; returns the rank count. `label` names the setting in errors.
Result<int> benchOnce(const TuneArgs& a, const std::string& label, const std::vector<std::string>& env,
                      const std::string& collectives, SizeTimes& into) {
  std::string cmd = "env -u NCCL_ALGO -u NCCL_PROTO -u NCCL_MIN_CTAS -u NCCL_MAX_CTAS -u NCCL_TUNER_PLUGIN ";
  for (const auto& e : env) {
    size_t eq = e.find('=');
    cmd += e.substr(0, eq + 1) + shellQuote(e.substr(eq + 1)) + " ";
  }
  cmd += fmt::format("/proc/{}/exe nccl bench --json --out-of-place-only {} -b {} -e {} -f {} -c {} -d {} -n {} -w {} 2>&1",
                     getpid(), a.gpus > 0 ? "-g " + std::to_string(a.gpus) : "", a.min_bytes, a.max_bytes, a.factor,
                     collectives, a.dtype, a.iters, a.warmup);
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return Error{"cannot start nccl bench"};
  std::string outp;
  char buf[65536];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) outp.append(buf, n);
  int st = pclose(p);
  size_t brace = outp.find('{');
  if (st != 0 || brace == std::string::npos) {
    // One line: the worker's first error, without its own prefix.
    std::string why = outp.substr(0, outp.find('\n'));
    if (why.rfind("gpudoctor: error: ", 0) == 0) why = why.substr(18);
    return Error{fmt::format("nccl bench under {} failed: {}", label, why.empty() ? "no output" : why.substr(0, 300))};
  }
  auto j = nlohmann::json::parse(outp.substr(brace), nullptr, false);
  if (j.is_discarded() || !j.contains("results")) return Error{"nccl bench under " + label + " printed no JSON"};
  for (const auto& row : j["results"])
    into[{row["collective"].get<std::string>(), row["bytes"].get<int64_t>()}].push_back(
        row["out_of_place"]["time_us"].get<double>());
  return j.value("ranks", 0);
}

// The communicator's own channel count under NCCL's defaults, from one default run with
// NCCL_DEBUG=INFO ("24 coll channels, ..."); 0 when NCCL did not say.
int defaultChannels(const TuneArgs& a) {
  SizeTimes times;  // not part of the sweep: logging at init must not touch its figures
  std::string base = (std::filesystem::temp_directory_path() / fmt::format("gpudoctor_tune_{}", getpid())).string();
  auto n = benchOnce(a, "default", {"NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=INIT", "NCCL_DEBUG_FILE=" + base + ".%p.log"},
                     a.collectives, times);
  int channels = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::temp_directory_path(), ec)) {
    std::string path = e.path().string();
    if (path.rfind(base + ".", 0) != 0) continue;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);)
      if (size_t k = line.find(" coll channels"); k != std::string::npos) {
        size_t b = line.find_last_not_of("0123456789", k - 1);
        int c = std::atoi(line.c_str() + b + 1);
        if (c > 0) channels = channels ? std::min(channels, c) : c;
      }
    std::filesystem::remove(e.path(), ec);
  }
  return n.ok() ? channels : 0;
}

int runTuneWith(const TuneArgs& a);

// Stage 1 sweeps NCCL_ALGO x NCCL_PROTO; stage 2 sweeps CTA counts (NCCL_MIN_CTAS = NCCL_MAX_CTAS)
// under NCCL's default and under every algorithm/protocol stage 1 kept, so the sweep stays
// algos x protos + (1 + kept) x ctas settings rather than the full product. Each setting runs in
// `repeats` fresh processes; decideNcclTune keeps only gains beyond the noise; stage 3 re-measures
// the kept choices through the plugin itself and drops those it does not confirm.
int runTune(const TuneArgs& a) {
  for (const auto& c : splitList(a.collectives))
    if (c != "allreduce" && c != "allgather" && c != "reducescatter" && c != "broadcast" && c != "reduce")
      return fail("nccl tune: \"" + c + "\" cannot be tuned by a tuner plugin (allreduce, allgather, reducescatter, broadcast, reduce)");
  TuneArgs args = a;
  if (args.plugin.empty()) {
    std::error_code ec;
    auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    args.plugin = (self.parent_path() / "libnccl-tuner-gpudoctor.so").string();
  }
  if (!args.no_validate && !std::filesystem::exists(args.plugin))
    return fail("nccl tune: no tuner plugin at " + args.plugin + " to validate with (give --plugin PATH or --no-validate)");
  args.plugin = std::filesystem::absolute(args.plugin).string();
  return runTuneWith(args);
}

int runTuneWith(const TuneArgs& a) {
  auto algos = splitList(a.algos), protos = splitList(a.protos), ctas = splitList(a.ctas);
  for (const auto& c : ctas)
    if (c != "default" && (c.find_first_not_of("0123456789") != std::string::npos || std::atoi(c.c_str()) < 1 ||
                           std::atoi(c.c_str()) > 64))
      return fail("--ctas: \"" + c + "\" is not a CTA count (1-64)");
  std::vector<NcclTuneSetting> stage1;
  bool has_default = false;
  for (const auto& al : algos)
    for (const auto& pr : protos) {
      stage1.push_back({al, pr, "default"});
      has_default |= stage1.back().isDefault();
    }
  if (!has_default) stage1.insert(stage1.begin(), NcclTuneSetting{});
  NcclSweepTimes times;
  int nranks = 0;
  size_t done = 0;
  // NCCL refuses some pairs (NCCL_ALGO=tree for allgather: "invalid usage"). When a setting's first
  // process fails, each collective is tried alone; the ones NCCL refuses are not measured under that
  // setting (they keep the default), and only if none runs is it an error.
  auto measure = [&](const std::vector<NcclTuneSetting>& settings, size_t total) -> Status {
    for (const auto& s : settings) {
      std::string colls = a.collectives;
      for (int r = 0; r < a.repeats; ++r) {
        auto n = benchOnce(a, s.key(), s.envLines(), colls, times[s]);
        if (!n.ok() && r == 0 && colls.find(',') != std::string::npos) {
          std::string ok;
          for (const auto& c : splitList(colls))
            if (auto one = benchOnce(a, s.key(), s.envLines(), c, times[s]); one.ok()) {
              ok += (ok.empty() ? "" : ",") + c;
              n = one;
            }
          if (!ok.empty()) {
            std::fprintf(stderr, "\nnccl tune: NCCL refuses %s for some collectives; measured only %s under it\n",
                         s.key().c_str(), ok.c_str());
            colls = ok;
          }
        }
        if (!n.ok()) return n.error();
        nranks = n.value();
        ++done;
        std::fprintf(stderr, "\rnccl tune: %zu/%zu runs (%s)          ", done, total, s.key().c_str());
      }
    }
    return {};
  };
  size_t planned = stage1.size() * static_cast<size_t>(a.repeats) + 1;
  int channels = defaultChannels(a);
  ++done;
  if (Status st = measure(stage1, planned); !st.ok()) {
    std::fprintf(stderr, "\n");
    return fail(st.message());
  }
  std::vector<NcclTuneSetting> stage2;
  if (!ctas.empty()) {
    std::vector<NcclTuneSetting> bases = {NcclTuneSetting{}};
    for (const auto& c : decideNcclTune(times, 0.05, channels).choices)
      if (c.kept && std::find(bases.begin(), bases.end(), c.best) == bases.end()) bases.push_back(c.best);
    for (const auto& b : bases)
      for (const auto& c : ctas)
        if (c != "default") stage2.push_back({b.algo, b.proto, c});
  }
  if (Status st = measure(stage2, planned + stage2.size() * static_cast<size_t>(a.repeats)); !st.ok()) {
    std::fprintf(stderr, "\n");
    return fail(st.message());
  }
  NcclTuneDecision d = decideNcclTune(times, 0.05, channels);
  // Stage 3: the candidate configuration through the plugin itself, in fresh processes interleaved
  // with the default's, because the sweep's own default can differ from a later process's (on
  // 2 x H200 allreduce 512 B took 16.8 us in every sweep process and 6.5 us in every later one).
  bool any_kept = std::any_of(d.choices.begin(), d.choices.end(), [](const auto& c) { return c.kept; });
  int dropped = 0;
  bool validated = false;
  if (any_kept && !a.no_validate) {
    std::string candidate = a.out + ".candidate";
    if (Status st = writeFileAtomic(candidate, ncclTunerConfig(d, nranks, 1)); !st.ok()) {
      std::fprintf(stderr, "\n");
      return fail(st.message());
    }
    SizeTimes def, plug;
    size_t total = planned + stage2.size() * static_cast<size_t>(a.repeats) + 2 * static_cast<size_t>(a.repeats);
    for (int r = 0; r < a.repeats; ++r) {
      for (bool with : {false, true}) {
        std::vector<std::string> env;
        if (with) env = {"NCCL_TUNER_PLUGIN=" + a.plugin, "GPUDOCTOR_TUNER_CONFIG=" + candidate};
        auto n = benchOnce(a, with ? "the tuner plugin" : "default", env, a.collectives, with ? plug : def);
        if (!n.ok()) {
          std::remove(candidate.c_str());
          std::fprintf(stderr, "\n");
          return fail(n.error().message);
        }
        ++done;
        std::fprintf(stderr, "\rnccl tune: %zu/%zu runs (validating %s)          ", done, total,
                     with ? "with the plugin" : "default");
      }
    }
    std::remove(candidate.c_str());
    dropped = validateNcclTune(d, def, plug);
    validated = true;
  }
  std::fprintf(stderr, "\n");
  if (Status st = writeFileAtomic(a.out, ncclTunerConfig(d, nranks, 1)); !st.ok()) return fail(st.message());
  std::string env;
  for (const auto& e : d.env_setting.envLines()) env += (env.empty() ? "" : " ") + e;
  std::string o;
  if (a.json) {
    nlohmann::ordered_json j;
    j["tool"] = "gpudoctor nccl tune";
    j["ranks"] = nranks;
    j["settings"] = times.size();
    j["repeats"] = a.repeats;
    j["default_channels"] = channels;
    nlohmann::ordered_json arr = nlohmann::ordered_json::array();
    for (const auto& c : d.choices)
      arr.push_back({{"collective", c.key.collective}, {"bytes", c.key.bytes},
                     {"default_us", {{"median", c.default_median_us}, {"min", c.default_min_us}, {"max", c.default_max_us}}},
                     {"best", c.best.key()},
                     {"best_us", {{"median", c.best_median_us}, {"min", c.best_min_us}, {"max", c.best_max_us}}},
                     {"gain", c.gain()}, {"kept", c.kept}, {"validated", c.validated},
                     {"plugin_us", {{"median", c.plugin_median_us}, {"min", c.plugin_min_us}, {"max", c.plugin_max_us}}},
                     {"plugin_slower", c.regressed}});
    j["choices"] = arr;
    j["validated"] = validated;
    j["dropped_by_validation"] = dropped;
    j["env"] = d.has_env_setting ? nlohmann::ordered_json(d.env_setting.envLines()) : nlohmann::ordered_json::array();
    if (!d.has_env_setting) j["why_no_env"] = d.why_no_env;
    j["tuner_config"] = a.out;
    o = j.dump(1) + "\n";
  } else {
    o = fmt::format("# gpudoctor nccl tune: {} ranks, {} settings x {} fresh processes, out-of-place time (us), "
                    "median [min-max]; NCCL's own channel count {}\n",
                    nranks, times.size(), a.repeats, channels ? std::to_string(channels) : "unknown");
    o += fmt::format("{:<13} {:>10} {:>24} {:>22} {:>24} {:>7}  {}\n", "collective", "bytes", "default", "best setting",
                     "best", "gain", validated ? "with the plugin (validation runs)" : "");
    auto range = [](double m, double lo, double hi) { return fmt::format("{:.2f} [{:.2f}-{:.2f}]", m, lo, hi); };
    for (const auto& c : d.choices) {
      std::string verdict = c.kept ? (c.validated ? "kept, validated" : "kept") : "";
      if (validated && c.plugin_median_us > 0)
        verdict = range(c.plugin_median_us, c.plugin_min_us, c.plugin_max_us) + " " +
                  (c.validated ? "kept, validated" : c.regressed ? "SLOWER than default" : "");
      o += fmt::format("{:<13} {:>10} {:>24} {:>22} {:>24} {:>6.1f}%  {}\n", c.key.collective, c.key.bytes,
                       range(c.default_median_us, c.default_min_us, c.default_max_us), c.best.key(),
                       range(c.best_median_us, c.best_min_us, c.best_max_us), 100 * c.gain(), verdict);
    }
    o += "\nKept: every run of the setting beat every run of the default, and the median by > 5 %; the rest keep "
         "NCCL's default.\n";
    if (validated)
      o += fmt::format("Validated: {} fresh processes with the plugin against {} without; {} kept choice(s) dropped "
                       "because the plugin did not beat the default there.\n",
                       a.repeats, a.repeats, dropped);
    else if (any_kept)
      o += "Not validated (--no-validate): the choices were not re-measured through the plugin.\n";
    if (d.has_env_setting)
      o += fmt::format("\nEnvironment lines for the whole job (faster at {} size(s), never slower beyond the noise):\n"
                       "  {}\n",
                       d.env_wins, env);
    else
      o += "\nEnvironment lines: none: " + d.why_no_env + ".\n";
    o += fmt::format("\nTuner configuration written to {} (per collective and size). Apply it with:\n"
                     "  NCCL_TUNER_PLUGIN=<dir>/libnccl-tuner-gpudoctor.so GPUDOCTOR_TUNER_CONFIG={}\n"
                     "Per-size choices use at most NCCL's own channel count: the plugin can lower it, not raise it.\n",
                     a.out, a.out);
  }
  std::fwrite(o.data(), 1, o.size(), stdout);
  return 0;
}

}  // namespace

std::function<int()> addNcclTune(CLI::App* nccl) {
  auto a = std::make_shared<TuneArgs>();
  auto* cmd = nccl->add_subcommand(
      "tune",
      "Sweep NCCL_ALGO x NCCL_PROTO, then CTA counts (NCCL_MIN_CTAS = NCCL_MAX_CTAS), per collective and size, "
      "each setting in several fresh nccl bench processes; keep only gains beyond the noise; print environment "
      "lines safe for the whole job (if any) and write a per-size configuration for gpudoctor's NCCL tuner plugin "
      "(libnccl-tuner-gpudoctor.so).");
  addSweepOptions(cmd, *a, "allreduce, allgather, reducescatter, broadcast, reduce (comma list)");
  cmd->add_option("--algos", a->algos, "Algorithms to try (NCCL_ALGO values; default = NCCL's choice)")->capture_default_str();
  cmd->add_option("--protos", a->protos, "Protocols to try (NCCL_PROTO values)")->capture_default_str();
  cmd->add_option("--ctas", a->ctas, "CTA counts to try in stage 2 (\"\" skips it)")->capture_default_str();
  cmd->add_option("-r,--repeats", a->repeats, "Fresh runs per setting (medians)")->capture_default_str()->check(CLI::Range(1, 100));
  cmd->add_flag("--json", a->json, "JSON output");
  cmd->add_option("--plugin", a->plugin, "libnccl-tuner-gpudoctor.so for the validation runs (default: beside gpudoctor)");
  cmd->add_flag("--no-validate", a->no_validate, "Skip re-measuring the kept choices through the plugin");
  cmd->add_option("-o,--out", a->out, "Tuner configuration to write")->capture_default_str();
  return [a, cmd] { return cmd->parsed() ? runTune(*a) : -1; };
}

std::function<int()> addNcclBench(CLI::App* nccl, std::function<std::vector<std::string>()> argv) {
  auto a = std::make_shared<BenchArgs>();
  auto* cmd = nccl->add_subcommand(
      "bench",
      "Collective benchmark in nccl-tests' columns (size count type redop root | time algbw busbw #wrong, "
      "out-of-place and in-place): one process per GPU started here, or one per rank under torchrun / mpirun "
      "/ srun (MASTER_ADDR, MASTER_PORT). Every size is checked against exact expected values first.");
  addSweepOptions(cmd, *a, "allreduce, allgather, reducescatter, broadcast, reduce, alltoall, sendrecv (comma list) or all");
  cmd->add_flag("--no-check", a->no_check, "Skip the correctness check");
  cmd->add_flag("--out-of-place-only", a->out_of_place_only, "Skip the in-place measurements");
  cmd->add_flag("--json", a->json, "JSON output");
  cmd->add_option("--worker-rank", a->worker_rank)->group("");
  cmd->add_option("--worker-nranks", a->worker_nranks)->group("");
  return [a, cmd, argv] { return cmd->parsed() ? runBench(*a, argv()) : -1; };
}

}  // namespace gpudoctor::cli
