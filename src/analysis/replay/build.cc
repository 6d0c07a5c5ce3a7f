// One rank's graph, built in steps (RankBuilder, one concern per file): the host side, the GPU work,
// the waits the trace does not record, then the edges (the GPU's on a thread of their own for large
// ranks, while this one builds the host calls').
#include <thread>

#include "analysis/replay/graph.h"

namespace gpudoctor {

void ReplayModel::Impl::buildRank(uint16_t rank, RankGraph& g) {
  RankBuilder b(g, rank, stats);
  b.hostRanges();
  b.scanHostEvents();
  b.optimizerRegions();
  b.collectGpuWork();
  b.launchSpans();
  b.markAttention();
  b.scoreRegions();
  b.orderGpuWork();
  b.inferEventWaits();
  std::thread gpu_thread;
  struct Joiner {  // joined however this function is left
    std::thread& t;
    ~Joiner() {
      if (t.joinable()) t.join();
    }
  } joiner{gpu_thread};
  if (g.ops.size() > 50000)
    gpu_thread = std::thread([&b] { b.gpuEdges(); });
  else
    b.gpuEdges();
  b.hostEdges();
  if (gpu_thread.joinable()) gpu_thread.join();
  parts.push_back(std::move(b.host_edges));
  parts.push_back(std::move(b.gpu_edges));
  std::vector<int32_t>().swap(g.item_of);  // only the build looks events up
  stats.bound_by_launch += b.gpu_stats.bound_by_launch;
  stats.bound_by_stream += b.gpu_stats.bound_by_stream;
  stats.bound_by_cross_stream += b.gpu_stats.bound_by_cross_stream;
  stats.unbound += b.gpu_stats.unbound;
}

}  // namespace gpudoctor
