// The MPI mode's few collective steps (analyze --mpi), behind functions that exist with or without
// MPI: built without it, mpiInit says so and nothing else is called. Open MPI (Debian's
// libopenmpi-dev) or any MPI-3 library; started by mpirun or Slurm's srun.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

namespace gpudoctor::cli {

struct MpiWorld {
  int rank = 0;
  int size = 1;
};

// Initializes MPI (once per process); an Error when this build has no MPI.
Result<MpiWorld> mpiInit();
// Every process's text, on process 0 in process order (empty elsewhere).
std::vector<std::string> mpiGather(const std::string& mine);
// The largest value over the processes, on every process.
int64_t mpiMax(int64_t v);
// Process 0's value, on every process.
int mpiBroadcast(int v);
void mpiFinalize();

}  // namespace gpudoctor::cli
