// libgpudoctor-mpi.so: the MPI calls of analyze --mpi, in a library of their own that gpudoctor
// loads (dlopen) only when --mpi is given, so that the binary does not need an MPI runtime
// otherwise. A C ABI (declared again in mpi_world.cc), built against the MPI library CMake finds.
#include <mpi.h>

#include <algorithm>

extern "C" {

// Initializes MPI once per process; 0 on success.
int gpudoctor_mpi_init(int* rank, int* size) {
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited && MPI_Init(nullptr, nullptr) != MPI_SUCCESS) return 1;
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  return 0;
}

// Every process's bytes, on process 0: `alloc(ctx, proc, n)` returns where process proc's n bytes go
// (process 0's own are not sent: the caller has them).
void gpudoctor_mpi_gather(const char* mine, long long n, char* (*alloc)(void* ctx, int proc, long long n), void* ctx) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // Sizes first (64-bit), then point-to-point in chunks of at most 1 GiB, so no count overflows an int.
  long long* sizes = rank == 0 ? new long long[size] : nullptr;
  MPI_Gather(&n, 1, MPI_LONG_LONG, sizes, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  constexpr long long kChunk = 1LL << 30;
  if (rank == 0) {
    for (int p = 1; p < size; ++p) {
      char* dst = alloc(ctx, p, sizes[p]);
      for (long long off = 0; off < sizes[p]; off += kChunk) {
        int len = static_cast<int>(std::min(kChunk, sizes[p] - off));
        MPI_Recv(dst + off, len, MPI_CHAR, p, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
    }
  } else {
    for (long long off = 0; off < n; off += kChunk) {
      int len = static_cast<int>(std::min(kChunk, n - off));
      MPI_Send(mine + off, len, MPI_CHAR, 0, 7, MPI_COMM_WORLD);
    }
  }
  delete[] sizes;
}

long long gpudoctor_mpi_max(long long v) {
  long long out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

int gpudoctor_mpi_broadcast(int v) {
  MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return v;
}

void gpudoctor_mpi_finalize() {
  int fin = 0;
  MPI_Finalized(&fin);
  if (!fin) MPI_Finalize();
}

}  // extern "C"
