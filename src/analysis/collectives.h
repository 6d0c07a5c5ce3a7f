// Collectives seen in the trace (NCCL's, and all-reduces by symmetric-memory and custom all-reduce
// kernels, their variant the library): per (collective, dtype, size, kernel variant, group size,
// process group),
// count and time, and the bandwidth nccl-tests would report (algbw = bytes / time; busbw =
// algbw × the collective's bus factor for the group size). Kernel time includes waiting for the
// slowest peer, so a straggler lowers these figures: compare with `nccl bench` before tuning.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/breakdown.h"

namespace gpudoctor {

struct CollectiveStats {
  std::string collective;  // "allreduce"
  std::string dtype;       // "Float"
  std::string variant;     // kernel variant named by the kernel, e.g. "RING_LL" (not necessarily what ran)
  int64_t bytes = 0;       // nccl-tests "size": max(in, out) elements × dtype size
  int group_size = 0;
  std::string process_group;  // the group's name where the trace has one, else its rank list; "" unknown
  DurationStats dur;
  double algbw_gbps = 0;  // bytes / mean time, GB/s (1e9)
  double busbw_gbps = 0;
  double bus_factor = 0;
};

// Bytes per element of a PyTorch dtype name as NCCL kernels record it ("Float", "BFloat16"); 0 if unknown.
int dtypeBytes(std::string_view dtype);
// nccl-tests bus bandwidth factor for a collective name and group size (allreduce 2(n-1)/n, ...).
double busFactor(std::string_view collective, int n);
// "allreduce" from "ncclDevKernel_AllReduce_Sum_f32_RING_LL(...)" (the kind in the trace's own
// lower-case vocabulary); empty when the name does not say.
std::string ncclKernelCollective(std::string_view kernel_name);
// "RING_LL" from "ncclDevKernel_AllReduce_Sum_f32_RING_LL(...)"; empty when the name has none.
std::string ncclKernelVariant(std::string_view kernel_name);

// NCCL and other libraries' all-reduce kernels starting inside the selected windows of the given ranks, grouped.
std::vector<CollectiveStats> summarizeCollectives(const std::vector<RankWindows>& ranks);

}  // namespace gpudoctor
