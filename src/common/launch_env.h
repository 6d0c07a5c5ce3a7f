// Who this process is in a job that a launcher started (torchrun, mpirun with Open MPI or MPICH,
// srun): rank, world size, local rank, and where rank 0 serves the NCCL id. Read from the launchers'
// own environment variables, so gpudoctor never needs a launcher of its own. Pure (the environment
// comes in as a function), so every launcher's variables are tested without one.
#pragma once
#include <functional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace gpudoctor {

struct LaunchEnv {
  bool joined = false;   // started by a launcher with more than one process
  std::string launcher;  // "torchrun", "Open MPI", "MPICH", "Slurm"
  int rank = 0, world_size = 1;
  int local_rank = -1;      // -1: the launcher did not say
  std::string master_addr;  // rank 0's host
  int id_port = 0;          // where rank 0 serves the NCCL unique id
};

// Reads the launch from `env` (getenv's contract: null when unset). Not launched (no world size, or
// a world of 1) is not an error; inconsistent or partial variables are, naming the variable.
Result<LaunchEnv> launchFromEnv(const std::function<const char*(const char*)>& env);

// The first host of a Slurm node list ("gpu[003-006,010],cpu1" -> "gpu003").
std::string firstSlurmHost(std::string_view nodelist);

}  // namespace gpudoctor
