// How an edit changes each edge's offset: GPU work's durations (scaleOf, and offsetOf's kGpu), host
// spans (RankGraph::hostSpan), calls and waits; and the ranking category of an edge on the critical path.
#include "analysis/replay/graph.h"

namespace gpudoctor {

double ReplayModel::Impl::scaleOf(uint16_t rank, uint32_t item, const ReplayEdits& ed) const {
  const RankGraph& g = graphs[rank];
  const uint32_t event = g.ops[item - g.calls.size()];
  const Event& e = g.ra->trace->events[event];
  double s;
  if (e.kind == EventKind::kMemcpy) {
    s = ed.memcpy_scale;
    if (g.item_flags[item] & RankGraph::kPageableHtoD) {
      if (ed.pageable_htod_gbps > 0 && e.bytes > 0 && e.dur_ns > 0)  // bytes / (GB/s) = ns
        s *= std::min(1.0, static_cast<double>(e.bytes) / ed.pageable_htod_gbps / static_cast<double>(e.dur_ns));
      else
        s *= ed.pageable_htod_scale;
    }
  } else if (e.kind == EventKind::kMemset) {
    s = ed.memset_scale;
  } else {
    const uint16_t flags = g.item_flags[item];
    if (ed.fused_attention && (flags & RankGraph::kAttnScores)) return 0;
    if ((flags & RankGraph::kAttnGemm) && ed.attention_gemm_scale != 1)
      s = ed.attention_gemm_scale;
    else if ((flags & RankGraph::kAttnScores) && ed.attention_scores_scale > 0)
      s = ed.attention_scores_scale;
    else if ((flags & RankGraph::kAttnFusedFp32) && ed.fused_attention_fp32_scale != 1)
      s = ed.fused_attention_fp32_scale;
    else {
      const KernelClass k = g.ra->index.class_of_event[event];
      s = ed.kernel_scale[static_cast<size_t>(k)];
      const PrecisionKind pk = g.work_kind[item - g.calls.size()];
      if (pk == PrecisionKind::kBatchNorm)
        s *= ed.batch_norm_scale * ed.nchw_batch_norm_scale;
      else if (pk == PrecisionKind::kBatchNormNhwc)
        s *= ed.batch_norm_scale;
      else if (pk == PrecisionKind::kLayoutTranspose || pk == PrecisionKind::kTensorTransform)
        s *= ed.layout_transpose_scale;
      else if (pk == PrecisionKind::kConvolution && ed.convolution_scale > 0 && isGemm(k))
        s = ed.convolution_scale;
      else if (pk == PrecisionKind::kRecurrent && isGemm(k) && ed.recurrent_gemm_scale > 0)
        s = ed.recurrent_gemm_scale;
      else if (pk == PrecisionKind::kRecurrent && !isGemm(k) && ed.recurrent_other_scale > 0)
        s = ed.recurrent_other_scale;
      else if (const int m = misalignedGemmIndex(pk); m >= 0 && isGemm(k) && ed.misaligned_gemm_scale[m] > 0)
        s *= ed.misaligned_gemm_scale[m];
    }
    if (rank < ed.rank_compute_scale.size() && gpuCategory(e) == PathCategory::kCompute)
      s *= ed.rank_compute_scale[rank];
  }
  if (ed.optimizer_gpu_scale != 1 && (g.item_flags[item] & RankGraph::kInOptimizer)) s *= ed.optimizer_gpu_scale;
  if (ed.drop_recompute && (g.item_flags[item] & RankGraph::kInRecompute)) return 0;
  if (ed.moe_blocks_kept > 0 && (g.item_flags[item] & RankGraph::kInMoe)) s *= ed.moe_gpu_scale;
  if (ed.drop_embedding_fills && (g.item_flags[item] & RankGraph::kEmbedFill)) return 0;
  if (ed.drop_layout_transposes && g.work_kind[item - g.calls.size()] == PrecisionKind::kLayoutTranspose) return 0;
  return s;
}

int64_t ReplayModel::Impl::offsetOf(const Edge& e, const ReplayEdits& ed) const {
  switch (e.kind) {
    case kRoot:
      return e.c;
    case kLaunch:
      // Under the profiler a graph's work trickles out of its launch call while CUPTI instruments
      // each node (the call's cost per node: graph_node_overhead_ns); without it, the work follows
      // the launch as fast as the GPU runs it: a node's latency after the launch call's start is
      // capped as the gaps between the graph's nodes are.
      if (ed.graph_gap_cap_ns >= 0 && e.c > ed.graph_gap_cap_ns &&
          (graphs[e.rank].item_flags[graphs[e.rank].itemOfNode(e.node)] & RankGraph::kInGraph))
        return ed.graph_gap_cap_ns;
      return e.c;
    case kStream:
    case kCross: {
      if (e.c <= 0) return e.c;
      if (ed.graph_gap_cap_ns >= 0 &&  // a graph's node after another, on its stream or another one
          (graphs[e.rank].item_flags[graphs[e.rank].itemOfNode(e.node)] & RankGraph::kInGraph))
        return std::min(e.c, ed.graph_gap_cap_ns);
      return std::max<int64_t>(0, e.c - ed.gpu_gap_overhead_ns);
    }
    case kGpu: {
      const RankGraph& g = graphs[e.rank];
      const Event& w = g.ev(e.aux);
      const double sc = scaleOf(e.rank, e.aux, ed);
      int64_t d = scaled(w.dur_ns, sc);
      if (w.kind == EventKind::kKernel && sc > 0) {
        const size_t k = static_cast<size_t>(g.ra->index.class_of_event[g.ops[e.aux - g.calls.size()]]);
        d = std::max(d, std::min(w.dur_ns, ed.kernel_floor_ns[k])) + ed.kernel_add_ns[k];
        if (ed.optimizer_kernel_add_ns != 0 && (g.item_flags[e.aux] & RankGraph::kInOptimizer))
          d += ed.optimizer_kernel_add_ns;
        if (ed.micro_batch_merge > 1 && !(g.item_flags[e.aux] & (RankGraph::kInOptimizer | RankGraph::kCollective)) &&
            !isCommunication(static_cast<KernelClass>(k)))
          d -= std::min(d, ed.merge_kernel_fixed_ns) * (ed.micro_batch_merge - 1) / ed.micro_batch_merge;
      }
      return d;
    }
    case kHostGap: {
      const RankGraph& g = graphs[e.rank];
      uint32_t item = g.itemOfNode(e.node);  // aux: the events in it
      return g.lessCallCostBefore(g.hostSpan(g.trackOf(item), e.c, g.startOf(item), ed, e.aux), item, ed);
    }
    case kRootSpan: {
      const RankGraph& g = graphs[e.rank];
      uint32_t item = g.itemOfNode(e.node);
      return e.c + g.lessCallCostBefore(g.hostSpan(g.trackOf(item), e.c, g.startOf(item), ed, e.aux), item, ed);
    }
    case kHostSplit: {
      const RankGraph& g = graphs[e.rank];
      const uint32_t item = g.itemOfNode(e.node);
      const uint32_t track = g.trackOf(item);
      const auto& sp = g.splits[e.aux];
      return g.lessCallCostBefore(
          g.hostSpan(track, sp[0], sp[1], ed, sp[4]) + g.hostSpan(track, sp[2], sp[3], ed, sp[5]), item, ed);
    }
    case kCallDur: {
      const RankGraph& g = graphs[e.rank];
      const Event& ce = g.ev(e.aux);
      const uint16_t flags = g.item_flags[e.aux];
      int64_t d = std::max<int64_t>(0, ce.dur_ns - g.callCost(e.aux, ed));
      if (ed.free_launches && (flags & RankGraph::kOwnsWork) &&
          !(ed.graph_keeps_optimizer && (flags & RankGraph::kInOptimizer)) &&
          !(ed.graph_keeps_loss && g.inLoss(g.trackOf(e.aux), ce.start_ns)))
        d = 0;                                                                // a launch inside the graph
      if (ed.fused_attention && (flags & RankGraph::kLaunchesScores)) d = 0;  // inside the fused kernel
      if (ed.drop_recompute && (flags & RankGraph::kInRecompute)) d = 0;      // not re-run
      if (ed.micro_batch_merge > 1 && !(flags & RankGraph::kInOptimizer)) d /= ed.micro_batch_merge;  // one pass of A
      if ((flags & RankGraph::kGraphLaunch) && ed.graph_node_overhead_ns > 0)  // keeps 1 us per 100 nodes
        d = std::max<int64_t>(std::min<int64_t>(d, 10 * static_cast<int64_t>(g.work_count[e.aux])),
                              d - ed.graph_node_overhead_ns * static_cast<int64_t>(g.work_count[e.aux]));
      if (ed.fused_optimizer && (flags & RankGraph::kInOptimizer)) {
        if (const OptRegion* r = g.optAt(g.trackOf(e.aux), ce.start_ns))
          d = static_cast<int64_t>(std::llround(static_cast<double>(d) * RankGraph::keptShare(*r)));
      }
      if (ed.moe_blocks_kept > 0 && (flags & RankGraph::kInMoe)) {
        if (const MoeRange* r = g.moeAt(g.trackOf(e.aux), ce.start_ns))
          d = static_cast<int64_t>(std::llround(static_cast<double>(d) * RankGraph::moeKept(*r, ed.moe_blocks_kept)));
      }
      if (e.c >= 0) d = std::min(d, std::max<int64_t>(0, ce.dur_ns - e.c));  // the wait dropped
      if (e.rank < ed.rank_host_scale.size() && ed.rank_host_scale[e.rank] != 1.0)
        d = static_cast<int64_t>(std::llround(static_cast<double>(d) * ed.rank_host_scale[e.rank]));
      return d;
    }
    case kSyncTail:
    case kSyncAwait: {
      int64_t tail = e.c;
      const int64_t oh = graphs[e.rank].profilerCost(ed.api_call_overhead_ns, ed);
      if (oh > 0) tail = std::max<int64_t>(std::min<int64_t>(tail, 0), tail - oh);
      return e.kind == kSyncTail ? std::max<int64_t>(0, tail) : tail;
    }
    case kJoin: {
      const auto& j = joins[e.aux];
      return e.c + scaled(j[0], scaleOf(e.rank, static_cast<uint32_t>(j[1]), ed));
    }
  }
  return e.c;
}

PathCategory ReplayModel::Impl::categoryOf(const Edge& e) const {
  switch (e.kind) {
    case kLaunch:
    case kHostGap:
    case kHostSplit:
    case kRootSpan:
      return PathCategory::kHostLaunch;
    case kGpu:
      return gpuCategory(graphs[e.rank].ev(e.aux));
    case kJoin:
      return PathCategory::kCommunication;
    case kCallDur:
      return (graphs[e.rank].item_flags[e.aux] & RankGraph::kSyncRole) ? PathCategory::kSync
                                                                       : PathCategory::kHostLaunch;
    case kSyncTail:
    case kSyncAwait:
      return PathCategory::kSync;
    default:
      return PathCategory::kOtherIdle;
  }
}

}  // namespace gpudoctor
