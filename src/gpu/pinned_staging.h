// Page-locked (pinned) staging buffers for the shard reader, so a loader's copy to the GPU can be
// asynchronous (cudaMemcpyAsync from pageable memory is staged through a driver buffer and blocks).
// CUDA builds only; without a usable driver it falls back to pageable memory and says why.
#pragma once
#include "datapipe/shard_reader.h"

namespace gpudoctor {

// cudaHostAlloc-backed staging, or pageable staging whose `kind` names why pinning was not possible.
StagingAllocator pinnedStaging();

}  // namespace gpudoctor
