// `gpudoctor nccl bench`: starts one worker process per GPU (itself, re-executed), or joins a job
// launched by torchrun / mpirun / srun, and prints nccl-tests' table from rank 0.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "cli/commands.h"
#include "cli/json_output.h"
#include "cli/nccl_sweep.h"
#include "common/byte_size.h"
#include "common/launch_env.h"
#include "gpu/nccl_bench.h"
#include "launch/processes.h"
#include "launch/rendezvous.h"
#include "report/nccl_bench_report.h"

namespace gpudoctor::cli {

namespace {

struct BenchArgs : SweepArgs {
  bool no_check = false, out_of_place_only = false;
  std::string json;
  int check = 1;  // nccl-tests' -c 0|1
  int worker_rank = -1, worker_nranks = -1;
};

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
  o.check = !a.no_check && a.check != 0;
  o.in_place = !a.out_of_place_only;
  static const std::vector<std::string> kAll = {"allreduce", "allgather", "reducescatter", "broadcast",
                                                "reduce",    "alltoall",  "sendrecv"};
  o.collectives.clear();
  std::string list =
      a.collectives == "all" ? "allreduce,allgather,reducescatter,broadcast,reduce,alltoall,sendrecv" : a.collectives;
  for (size_t p = 0; p <= list.size();) {
    size_t q = list.find(',', p);
    if (q == std::string::npos) q = list.size();
    std::string c = list.substr(p, q - p);
    if (std::find(kAll.begin(), kAll.end(), c) == kAll.end())
      return Error{"--collectives: unknown collective \"" + c + "\""};
    o.collectives.push_back(c);
    p = q + 1;
  }
  return o;
}

int worker(const BenchArgs& a, int rank, int nranks, int device, const nccl::UniqueId& id) {
  auto o = options(a);
  if (!o.ok()) return fail(o.error().message, kUsage);
  auto rows = runNcclBench(o.value(), rank, nranks, device, id);
  if (!rows.ok()) return fail(rows.error().message, kBadInput);
  if (rank == 0) {
    std::string json = a.json.empty() ? "" : renderNcclBenchJson(rows.value(), nranks);
    std::string text = jsonOnly(a.json) ? "" : renderNcclBenchTable(rows.value(), nranks, o.value().in_place);
    if (std::string err = writeOutputs(a.json, text, json); !err.empty()) return fail(err, kBadInput);
    std::fflush(stdout);
  }
  return wrongElements(rows.value()) ? kGateFailed : kOk;  // #wrong: a check failed
}

int runBench(const BenchArgs& a, const std::vector<std::string>& argv) {
  if (auto o = options(a); !o.ok()) return fail(o.error().message, kUsage);
  auto api = nccl::load();
  if (!api.ok()) return fail(api.error().message, kNoDevice);  // no NCCL here
  // A worker this process started.
  if (a.worker_rank >= 0) {
    nccl::UniqueId id{};
    const char* h = std::getenv("GPUDOCTOR_NCCL_ID");
    if (!h || !unhexBytes(h, id.internal)) return fail("worker started without GPUDOCTOR_NCCL_ID", kUsage);
    return worker(a, a.worker_rank, a.worker_nranks, a.worker_rank, id);
  }
  // Started by torchrun / mpirun / srun: join that job.
  if (a.gpus == 0) {
    auto launch = launchFromEnv([](const char* k) { return std::getenv(k); });
    if (!launch.ok()) return fail(launch.error().message, kUsage);
    if (const LaunchEnv& l = launch.value(); l.joined) {
      // Before the rendezvous: a rank without a GPU would otherwise wait for its peers' timeout.
      if (localGpuCount() < 1)
        return fail("no GPU found on this node (no /dev/nvidia0; CUDA_VISIBLE_DEVICES?): not joining the job",
                    kNoDevice);
      int device = l.local_rank >= 0 ? l.local_rank : l.rank % std::max(1, localGpuCount());
      nccl::UniqueId id{};
      if (l.rank == 0 && api.value()->GetUniqueId(&id) != 0) return fail("ncclGetUniqueId failed", kBadInput);
      if (Status s = exchangeId(l, id.internal); !s.ok()) return fail(s.message(), kBadInput);
      return worker(a, l.rank, l.world_size, device, id);
    }
  }
  // One process per local GPU, started here.
  int n = a.gpus > 0 ? a.gpus : localGpuCount();
  if (n < 1) return fail("no GPU found (no /dev/nvidia0; set -g or CUDA_VISIBLE_DEVICES)", kNoDevice);
  nccl::UniqueId id{};
  if (nccl::Result r = api.value()->GetUniqueId(&id); r != 0)
    return fail(std::string("ncclGetUniqueId failed: ") + api.value()->GetErrorString(r), kBadInput);
  std::vector<std::vector<std::string>> argvs;
  for (int r = 0; r < n; ++r) {
    argvs.push_back(argv);
    argvs.back().insert(argvs.back().end(), {"--worker-rank", std::to_string(r), "--worker-nranks", std::to_string(n)});
  }
  auto exits = runProcesses("/proc/self/exe", argvs, {"GPUDOCTOR_NCCL_ID=" + hexBytes(id.internal)});
  if (!exits.ok()) return fail(exits.error().message, kBadInput);
  int rc = 0;
  for (size_t k = 0; k < exits.value().size(); ++k) {
    const ProcessExit& e = exits.value()[k];
    if (e.signal) {
      std::fprintf(stderr, "gpudoctor: error: rank %zu died of signal %d\n", k, e.signal);
      rc = std::max(rc, kBadInput);
    } else if (e.exit_code) {
      rc = std::max(rc, e.exit_code);
    }
  }
  return rc;
}

}  // namespace

std::function<int()> addNcclBench(CLI::App* nccl, std::function<std::vector<std::string>()> argv) {
  auto a = std::make_shared<BenchArgs>();
  auto* cmd = nccl->add_subcommand(
      "bench",
      "Collective benchmark in nccl-tests' columns (size count type redop root | time algbw busbw #wrong, "
      "out-of-place and in-place): one process per GPU started here, or one per rank under torchrun / mpirun "
      "/ srun (MASTER_ADDR, MASTER_PORT). Every size is checked against exact expected values first.");
  addSweepOptions(cmd, *a,
                  "allreduce, allgather, reducescatter, broadcast, reduce, alltoall, sendrecv (comma list) or all");
  cmd->add_option("-c,--check", a->check, "Check every result (1, the default) or not (0), as nccl-tests' -c")
      ->capture_default_str()
      ->check(CLI::IsMember({0, 1}));
  cmd->add_flag("--no-check", a->no_check, "Skip the correctness check (the same as -c 0)");
  cmd->add_flag("--out-of-place-only", a->out_of_place_only, "Skip the in-place measurements");
  addJsonOption(cmd, &a->json, "every size's times and bandwidths");
  cmd->add_option("--worker-rank", a->worker_rank)->group("");
  cmd->add_option("--worker-nranks", a->worker_nranks)->group("");
  return [a, cmd, argv] { return cmd->parsed() ? runBench(*a, argv()) : -1; };
}

}  // namespace gpudoctor::cli
