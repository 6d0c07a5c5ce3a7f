// The collective benchmark behind `gpudoctor nccl bench`: one process per GPU, a size sweep per
// collective, every result checked against the exact expected values before it is timed, output in
// nccl-tests' columns. Runs inside one worker process (a rank); the launcher lives in launch/.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "gpu/nccl_api.h"
#include "model/nccl_bench.h"

namespace gpudoctor {

struct NcclBenchOptions {
  std::vector<std::string> collectives = {
      "allreduce"};  // allreduce allgather reducescatter broadcast reduce alltoall sendrecv
  int64_t min_bytes = 8, max_bytes = 128LL << 20;
  double factor = 2;
  std::string dtype = "float";  // float half bfloat16 int32 double
  int warmup = 5, iters = 20;
  bool check = true;
  bool in_place = true;  // also measure in place (nccl-tests' second column group)
  int root = 0;
};

// Runs the sweep as `rank` of `nranks` on CUDA device `device`. Rows are complete on every rank.
Result<std::vector<NcclBenchRow>> runNcclBench(const NcclBenchOptions& opt, int rank, int nranks, int device,
                                               const nccl::UniqueId& id);

}  // namespace gpudoctor
