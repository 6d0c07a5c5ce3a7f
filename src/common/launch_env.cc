#include "common/launch_env.h"

#include <charconv>

namespace gpudoctor {
namespace {

bool toInt(const char* s, int& v) {
  if (!s || !*s) return false;
  std::string_view t(s);
  auto r = std::from_chars(t.data(), t.data() + t.size(), v);
  return r.ec == std::errc() && r.ptr == t.data() + t.size();
}

}  // namespace

std::string firstSlurmHost(std::string_view list) {
  int depth = 0;
  size_t end = list.size();
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i] == '[') ++depth;
    if (list[i] == ']') --depth;
    if (list[i] == ',' && depth == 0) {
      end = i;
      break;
    }
  }
  std::string_view first = list.substr(0, end);
  size_t open = first.find('[');
  if (open == std::string_view::npos) return std::string(first);
  size_t close = first.find(']', open);
  if (close == std::string_view::npos) return "";
  std::string_view inside = first.substr(open + 1, close - open - 1);
  size_t stop = inside.find_first_of("-,");
  return std::string(first.substr(0, open)) + std::string(inside.substr(0, stop)) +
         std::string(first.substr(close + 1));
}

Result<LaunchEnv> launchFromEnv(const std::function<const char*(const char*)>& env) {
  struct Family {
    const char *launcher, *world, *rank, *local;
  };
  // srun sets SLURM_STEP_NUM_TASKS only inside a step; SLURM_NTASKS is also set in a batch script,
  // where one process running gpudoctor alone must not wait for peers that will never come.
  static const Family kFamilies[] = {
      {"torchrun", "WORLD_SIZE", "RANK", "LOCAL_RANK"},
      {"Open MPI", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK"},
      {"MPICH", "PMI_SIZE", "PMI_RANK", "MPI_LOCALRANKID"},
      {"Slurm", "SLURM_STEP_NUM_TASKS", "SLURM_PROCID", "SLURM_LOCALID"}};
  LaunchEnv l;
  const Family* f = nullptr;
  for (const auto& c : kFamilies)
    if (env(c.world)) {
      f = &c;
      break;
    }
  if (!f) return l;
  if (!toInt(env(f->world), l.world_size) || l.world_size < 1)
    return Error{std::string(f->world) + "=\"" + env(f->world) + "\" is not a process count"};
  if (l.world_size == 1) return l;
  l.joined = true;
  l.launcher = f->launcher;
  if (!env(f->rank))
    return Error{std::string(f->world) + " is set but " + f->rank + " is not: which rank is this process?"};
  if (!toInt(env(f->rank), l.rank) || l.rank < 0 || l.rank >= l.world_size)
    return Error{std::string(f->rank) + "=\"" + env(f->rank) + "\" is not a rank below " + f->world + "=" +
                 std::to_string(l.world_size)};
  if (const char* lr = env(f->local); lr && !toInt(lr, l.local_rank))
    return Error{std::string(f->local) + "=\"" + lr + "\" is not a number"};
  // Rank 0's address: ours, then torchrun's, then Slurm's first node.
  if (const char* a = env("GPUDOCTOR_MASTER_ADDR"))
    l.master_addr = a;
  else if (const char* m = env("MASTER_ADDR"))
    l.master_addr = m;
  else if (const char* nl = env("SLURM_STEP_NODELIST") ? env("SLURM_STEP_NODELIST") : env("SLURM_JOB_NODELIST"))
    l.master_addr = firstSlurmHost(nl);
  if (l.master_addr.empty())
    return Error{
        std::string("a ") + f->launcher +
        " launch needs rank 0's host: export MASTER_ADDR (and pass it to every rank, e.g. mpirun -x MASTER_ADDR)"};
  // The port: ours; else the one after MASTER_PORT (torchrun's own store listens on MASTER_PORT);
  // else, under Slurm, one derived from the job id so concurrent jobs on a node differ.
  int port = 0, job = 0;
  if (const char* p = env("GPUDOCTOR_MASTER_PORT")) {
    if (!toInt(p, port)) return Error{std::string("GPUDOCTOR_MASTER_PORT=\"") + p + "\" is not a port"};
  } else if (const char* mp = env("MASTER_PORT")) {
    if (!toInt(mp, port)) return Error{std::string("MASTER_PORT=\"") + mp + "\" is not a port"};
    ++port;
  } else if (toInt(env("SLURM_JOB_ID"), job)) {
    port = 20000 + job % 20000;
  }
  if (port <= 0 || port > 65535)
    return Error{"no port for rank 0 to serve the NCCL id on: export MASTER_PORT (a free port on rank 0's host)"};
  l.id_port = port;
  return l;
}

}  // namespace gpudoctor
