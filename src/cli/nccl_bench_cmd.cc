// `gpudoctor nccl bench`: starts one worker process per GPU (itself, re-executed), or joins a job
// launched by torchrun / mpirun / srun, and prints nccl-tests' table from rank 0.
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
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

const char* envOr(const char* a, const char* b = nullptr, const char* c = nullptr) {
  for (const char* k : {a, b, c})
    if (k)
      if (const char* v = std::getenv(k); v && *v) return v;
  return nullptr;
}

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

// The unique id from rank 0 to the others over TCP (MASTER_ADDR:MASTER_PORT), for jobs that
// torchrun, mpirun or srun started: no launcher of our own.
Status exchangeId(int rank, int nranks, nccl::UniqueId& id) {
  const char* addr = envOr("GPUDOCTOR_MASTER_ADDR", "MASTER_ADDR");
  if (!addr || !envOr("GPUDOCTOR_MASTER_PORT", "MASTER_PORT"))
    return Error{"a multi-process launch needs MASTER_ADDR and MASTER_PORT (rank 0's host and a free port)"};
  // torchrun's own store listens on MASTER_PORT: use the next port unless told otherwise.
  std::string port_s = envOr("GPUDOCTOR_MASTER_PORT") ? envOr("GPUDOCTOR_MASTER_PORT")
                                                     : std::to_string(std::atoi(envOr("MASTER_PORT")) + 1);
  const char* port = port_s.c_str();
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
    for (int served = 1; served < nranks; ++served) {
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
  o.min_bytes = std::max<int64_t>(1, lo.value());
  o.max_bytes = hi.value();
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
  const char* ws = envOr("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS");
  if (a.gpus == 0 && ws && std::atoi(ws) > 1) {
    int nranks = std::atoi(ws);
    int rank = std::atoi(envOr("RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"));
    const char* lr = envOr("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID");
    int device = lr ? std::atoi(lr) : rank % std::max(1, localGpuCount());
    nccl::UniqueId id{};
    if (rank == 0 && api.value()->GetUniqueId(&id) != 0) return bad("ncclGetUniqueId failed", 1);
    if (Status s = exchangeId(rank, nranks, id); !s.ok()) return bad(s.message(), 1);
    return worker(a, rank, nranks, device, id);
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
  std::string algos = "default,ring,tree", protos = "default,ll,ll128,simple";
  int repeats = 5;
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

// Sweeps NCCL_ALGO x NCCL_PROTO, one fresh `nccl bench` run per setting and repeat (NCCL reads them
// at communicator init), takes medians, keeps a choice only where all its runs beat all the default's
// and the median gain is over 5 %, and writes the tuner plugin's config.
int runTune(const TuneArgs& a) {
  auto fail = [](const std::string& m) {
    std::fprintf(stderr, "gpudoctor: error: %s\n", m.c_str());
    return 1;
  };
  for (const auto& c : splitList(a.collectives))
    if (c != "allreduce" && c != "allgather" && c != "reducescatter" && c != "broadcast" && c != "reduce")
      return fail("nccl tune: \"" + c + "\" cannot be tuned by a tuner plugin (allreduce, allgather, reducescatter, broadcast, reduce)");
  // (combo) -> (coll, bytes) -> times
  std::map<std::string, std::map<std::pair<std::string, int64_t>, std::vector<double>>> times;
  auto algos = splitList(a.algos), protos = splitList(a.protos);
  size_t total = algos.size() * protos.size() * static_cast<size_t>(a.repeats), done = 0;
  for (const auto& algo : algos)
    for (const auto& proto : protos)
      for (int r = 0; r < a.repeats; ++r) {
        std::string cmd;
        cmd += algo == "default" ? "env -u NCCL_ALGO " : "NCCL_ALGO=" + algo + " ";
        cmd += proto == "default" ? "env -u NCCL_PROTO " : "NCCL_PROTO=" + proto + " ";
        cmd += fmt::format("/proc/{}/exe nccl bench --json --out-of-place-only {} -b {} -e {} -f {} -c {} -d {} -n {} -w {} 2>&1",
                           getpid(), a.gpus > 0 ? "-g " + std::to_string(a.gpus) : "", a.min_bytes, a.max_bytes, a.factor,
                           a.collectives, a.dtype, a.iters, a.warmup);
        FILE* p = popen(cmd.c_str(), "r");
        if (!p) return fail("cannot start nccl bench");
        std::string outp;
        char buf[65536];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, p)) > 0) outp.append(buf, n);
        int st = pclose(p);
        ++done;
        std::fprintf(stderr, "\rnccl tune: %zu/%zu runs (NCCL_ALGO=%s NCCL_PROTO=%s)   ", done, total, algo.c_str(), proto.c_str());
        size_t brace = outp.find('{');
        if (st != 0 || brace == std::string::npos) {
          std::fprintf(stderr, "\n");
          return fail(fmt::format("nccl bench with NCCL_ALGO={} NCCL_PROTO={} failed: {}", algo, proto,
                                  outp.substr(0, 300)));
        }
        auto j = nlohmann::json::parse(outp.substr(brace), nullptr, false);
        if (j.is_discarded()) return fail("nccl bench printed no JSON");
        for (const auto& row : j["results"])
          times[algo + "/" + proto][{row["collective"].get<std::string>(), row["bytes"].get<int64_t>()}].push_back(
              row["out_of_place"]["time_us"].get<double>());
      }
  std::fprintf(stderr, "\n");
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const auto& def = times["default/default"];
  std::string o = fmt::format("# gpudoctor nccl tune: {} settings x {} repeats, medians of out-of-place time\n",
                              algos.size() * protos.size(), a.repeats);
  o += fmt::format("{:<14} {:>12} {:>11} {:>16} {:>11} {:>7}\n", "collective", "bytes", "default us", "best", "best us", "gain");
  std::string cfg = "# gpudoctor nccl tune: collective,min_bytes,max_bytes,algorithm,protocol,channels\n";
  std::vector<std::tuple<std::string, int64_t, std::string>> winners;
  for (const auto& [key, dv] : def) {
    double d = median(dv), spread = *std::max_element(dv.begin(), dv.end()) - *std::min_element(dv.begin(), dv.end());
    std::string best = "default/default";
    double bt = d;
    for (const auto& [combo, m] : times) {
      if (combo.find("default") != std::string::npos) continue;  // the plugin needs both set
      auto it = m.find(key);
      if (it == m.end()) continue;
      double t = median(it->second);
      if (t < bt) {
        bt = t;
        best = combo;
      }
    }
    // Keep a choice only when every run of it beat every run of the default (the two ranges do not
    // overlap) and its median is 5 % better: small-message latency varies between processes, and a
    // median of a few runs alone chose wrongly on 2 x H200 (docs/nccl_tune_2xh200.md).
    double best_max = best == "default/default" ? d : 0;
    if (best != "default/default") {
      const auto& bv = times[best][key];
      best_max = *std::max_element(bv.begin(), bv.end());
    }
    double def_min = *std::min_element(dv.begin(), dv.end());
    bool wins = best != "default/default" && bt < 0.95 * d && best_max < def_min && d - bt > spread;
    if (!wins) {
      best = "default";
      bt = d;
    }
    o += fmt::format("{:<14} {:>12} {:>11.2f} {:>16} {:>11.2f} {:>6.1f}%\n", key.first, key.second, d, best, bt,
                     100 * (d - bt) / d);
    winners.emplace_back(key.first, key.second, wins ? best : "");
  }
  // Size ranges: each measured size stands for the sizes up to the next one.
  for (size_t i = 0; i < winners.size(); ++i) {
    const auto& [coll, bytes, combo] = winners[i];
    if (combo.empty()) continue;
    int64_t hi = i + 1 < winners.size() && std::get<0>(winners[i + 1]) == coll ? std::get<1>(winners[i + 1]) - 1
                                                                               : (int64_t{1} << 62);
    int64_t lo = i > 0 && std::get<0>(winners[i - 1]) == coll ? bytes : 0;
    size_t slash = combo.find('/');
    cfg += fmt::format("{},{},{},{},{},0\n", coll, lo, hi, combo.substr(0, slash), combo.substr(slash + 1));
  }
  std::ofstream f(a.out + ".tmp");
  f << cfg;
  f.close();
  if (!f || std::rename((a.out + ".tmp").c_str(), a.out.c_str()) != 0) return fail(a.out + ": cannot write");
  o += fmt::format("\nTuner configuration written to {}. Apply it with:\n  NCCL_TUNER_PLUGIN=<dir>/libnccl-tuner-gpudoctor.so "
                   "GPUDOCTOR_TUNER_CONFIG={}\nChoices within noise (median gain < 5 %, or run ranges overlapping the "
                   "default's) keep NCCL's default.\n",
                   a.out, a.out);
  std::fwrite(o.data(), 1, o.size(), stdout);
  return 0;
}

}  // namespace

std::function<int()> addNcclTune(CLI::App* nccl) {
  auto a = std::make_shared<TuneArgs>();
  auto* cmd = nccl->add_subcommand(
      "tune",
      "Sweep NCCL_ALGO x NCCL_PROTO per collective and size (a fresh nccl bench run per setting and repeat), "
      "take medians, keep only gains beyond the noise, and write a configuration for gpudoctor's NCCL tuner "
      "plugin (libnccl-tuner-gpudoctor.so).");
  addSweepOptions(cmd, *a, "allreduce, allgather, reducescatter, broadcast, reduce (comma list)");
  cmd->add_option("--algos", a->algos, "Algorithms to try (NCCL_ALGO values; default = NCCL's choice)")->capture_default_str();
  cmd->add_option("--protos", a->protos, "Protocols to try (NCCL_PROTO values)")->capture_default_str();
  cmd->add_option("-r,--repeats", a->repeats, "Fresh runs per setting (medians)")->capture_default_str()->check(CLI::Range(1, 100));
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
