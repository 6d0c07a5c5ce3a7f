#include "cli/mpi_world.h"

#ifdef GPUDOCTOR_HAVE_MPI
#include <mpi.h>
#endif

namespace gpudoctor::cli {

#ifdef GPUDOCTOR_HAVE_MPI

Result<MpiWorld> mpiInit() {
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited && MPI_Init(nullptr, nullptr) != MPI_SUCCESS) return Error{"--mpi: MPI_Init failed"};
  MpiWorld w;
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
  return w;
}

std::vector<std::string> mpiGather(const std::string& mine) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // Sizes first (64-bit: a process's summaries may pass 2 GiB only in chunks, see below).
  long long n = static_cast<long long>(mine.size());
  std::vector<long long> sizes(rank == 0 ? size : 0);
  MPI_Gather(&n, 1, MPI_LONG_LONG, sizes.data(), 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  // Point-to-point in chunks of at most 1 GiB, so no count overflows an int.
  constexpr long long kChunk = 1LL << 30;
  if (rank == 0) {
    out.resize(static_cast<size_t>(size));
    out[0] = mine;
    for (int p = 1; p < size; ++p) {
      out[p].resize(static_cast<size_t>(sizes[p]));
      for (long long off = 0; off < sizes[p]; off += kChunk) {
        int len = static_cast<int>(std::min(kChunk, sizes[p] - off));
        MPI_Recv(out[p].data() + off, len, MPI_CHAR, p, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
    }
  } else {
    for (long long off = 0; off < n; off += kChunk) {
      int len = static_cast<int>(std::min(kChunk, n - off));
      MPI_Send(mine.data() + off, len, MPI_CHAR, 0, 7, MPI_COMM_WORLD);
    }
  }
  return out;
}

int64_t mpiMax(int64_t v) {
  long long in = v, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

int mpiBroadcast(int v) {
  MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return v;
}

void mpiFinalize() {
  int fin = 0;
  MPI_Finalized(&fin);
  if (!fin) MPI_Finalize();
}

#else

Result<MpiWorld> mpiInit() {
  return Error{"--mpi: this gpudoctor was built without MPI (install libopenmpi-dev and openmpi-bin, then rebuild)"};
}
std::vector<std::string> mpiGather(const std::string& mine) { return {mine}; }
int64_t mpiMax(int64_t v) { return v; }
int mpiBroadcast(int v) { return v; }
void mpiFinalize() {}

#endif

}  // namespace gpudoctor::cli
