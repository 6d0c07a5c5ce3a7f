// Measured copy bandwidth for `gpudoctor topo --measure` (CUDA builds): GPU-to-GPU with
// cudaMemcpyPeerAsync in both directions of every pair (peer access enabled where the hardware
// allows), and pinned host memory to and from each GPU. No kernels: copies, events and medians.
#pragma once
#include <cstdint>

#include "common/result.h"
#include "model/topology.h"

namespace gpudoctor {

// Times `repeats` copies of `bytes` per direction after one warm-up copy; the figure is the median.
// An Error names the CUDA call that failed (no GPU, driver mismatch, out of memory).
Result<BandwidthMeasurement> measureCopyBandwidth(int64_t bytes, int repeats);

}  // namespace gpudoctor
