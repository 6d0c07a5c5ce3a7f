#include "analysis/job_profile_host.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string_view>
#include <utility>

#include "analysis/job_profile_names.h"
#include "analysis/run_analysis.h"

namespace gpudoctor::job_profile_detail {
namespace {

struct Frame {
  int64_t end = 0;
  uint32_t event = 0;
  uint8_t copy = kNoCopy;  // a copy launched directly under this operator
};

// A top-level backward node being read (one per thread at a time).
struct BackwardNode {
  int64_t begin = INT64_MIN, end = INT64_MIN;
  uint32_t forward_mask = 0;      // forward operators seen inside it
  bool named_checkpoint = false;  // a reentrant checkpoint's backward node
  bool in_window = false;
  int64_t recompute_gpu_ns = 0;                                     // GPU time launched from those forward operators
  int64_t first_forward = INT64_MAX, last_forward_end = INT64_MIN;  // the re-run forward's host span
};

struct ThreadState {
  std::vector<Frame> ops;     // open operators (kHostOp)
  std::vector<Frame> ranges;  // open ranges (kRange)
  BackwardNode node;
  int64_t forward_entry_end = INT64_MIN;  // the outermost forward operator open inside the node
  int64_t optimizer_end = INT64_MIN;
  bool scaler_pending = false;         // between GradScaler's unscale and the optimizer step
  uint32_t last_sync_op = UINT32_MAX;  // the operator whose sync was last counted
  int64_t last_top_end = INT64_MIN;    // the end of the thread's last top-level operator
  // Autocast's casts (CastSite): are the activations FP32 here (under autocast), in which window, the
  // forward site of the open top-level operator (for a linear's bias), the open backward node's site.
  bool act_fp32 = true;
  // ... a run of top-level GEMM operators with only views between them (q, k, v) reads one input, whose
  // precision is the one before the run's first.
  bool in_gemm_run = false, run_input_fp32 = false;
  size_t cast_window = SIZE_MAX;
  size_t open_site = SIZE_MAX;
  bool open_is_to = false;  // open_site is an explicit cast's (aten::to), not a linear's
  bool node_has_gemm = false;
};

std::string optimizerNameOf(std::string_view range) {
  // "Optimizer.step#AdamW.step"
  size_t h = range.find('#');
  if (h == std::string_view::npos) return "";
  std::string_view n = range.substr(h + 1);
  if (n.size() > 5 && n.substr(n.size() - 5) == ".step") n.remove_suffix(5);
  return std::string(n);
}

// One host event and where it is: its name's flags, its thread, whether it starts inside a step
// window, inside its thread's open backward node, inside its thread's optimizer step.
struct At {
  uint32_t i;
  const Event& e;
  uint32_t f;
  ThreadState& ts;
  bool in_win, in_node, in_optimizer;
};

class HostWalk {
 public:
  HostWalk(const RankAnalysis& ra, const std::vector<uint32_t>& flags, CheckpointRegions* checkpoint,
           std::vector<CastSite>* casts);
  HostCounts run();

 private:
  int64_t hostBegin(size_t w) const { return ra_.windows[w].cpu_begin_ns; }
  int64_t hostEnd(size_t w) const { return std::max(ra_.windows[w].cpu_end_ns, ra_.windows[w].cpu_begin_ns + 1); }
  int64_t kernelNs(int64_t corr) const;
  void range(const At& a);
  void hostOp(const At& a);
  void backwardNode(const At& a, bool top);
  void checkpointEntry(const At& a, bool top);
  void recomputedForward(const At& a);
  void castSites(const At& a, bool top);
  void optimizerOp(const At& a, bool top);
  void call(const At& a);
  void launch(const At& a);
  void hostSync(const At& a);
  void finishNode(ThreadState& ts, uint32_t track);
  void finishCheckpoint();
  void finishCasts();

  const RankAnalysis& ra_;
  const RankTrace& t_;
  const TraceIndex& ix_;
  const std::vector<Event>& ev_;
  const std::vector<uint32_t>& flags_;
  CheckpointRegions* checkpoint_;
  std::vector<CastSite>* casts_;
  std::vector<uint8_t> fwd_;          // forwardEntryOf each interned string
  std::vector<uint8_t> step_track_;   // threads whose top-level operators end a backward pass
  std::vector<ThreadState> threads_;  // per track
  size_t win_ = 0;                    // host window cursor (events come in start order)
  bool in_burst_ = false;             // inside a run of backward nodes (one backward pass)
  std::vector<CastSite> fwd_casts_;   // CastSite: forward operators
  std::vector<CastSite> bwd_casts_;   // CastSite: backward nodes (their casts set at the end)
  HostCounts n_;
};

HostWalk::HostWalk(const RankAnalysis& ra, const std::vector<uint32_t>& flags, CheckpointRegions* checkpoint,
                   std::vector<CastSite>* casts)
    : ra_(ra),
      t_(*ra.trace),
      ix_(ra.index),
      ev_(ra.trace->events),
      flags_(flags),
      checkpoint_(checkpoint),
      casts_(casts),
      fwd_(t_.strings.size()),
      threads_(t_.tracks.size()) {
  for (uint32_t id = 0; id < t_.strings.size(); ++id) fwd_[id] = forwardEntryOf(t_.strings.view(id));
  // Threads that run the step ranges: their top-level operators (the forward, the optimizer) end
  // a backward pass. Without step ranges, any thread's do.
  step_track_.assign(t_.tracks.size(), ix_.step_annotations.empty() ? 1 : 0);
  for (uint32_t s : ix_.step_annotations) step_track_[ev_[s].track] = 1;
}

// Every event once: each host event to the handler of its kind, with its thread's open operators,
// ranges and forward entry closed up to its start.
HostCounts HostWalk::run() {
  for (uint32_t i = 0; i < ev_.size(); ++i) {
    const Event& e = ev_[i];
    const uint32_t f = flags_[e.name];
    n_.seen |= f;
    if (t_.tracks[e.track].gpu) continue;  // GPU work is read from the index (profileRank)
    while (win_ < ra_.windows.size() && e.start_ns >= hostEnd(win_)) ++win_;
    const bool in_win = win_ < ra_.windows.size() && e.start_ns >= hostBegin(win_);
    ThreadState& ts = threads_[e.track];
    while (!ts.ops.empty() && ts.ops.back().end <= e.start_ns) ts.ops.pop_back();
    while (!ts.ranges.empty() && ts.ranges.back().end <= e.start_ns) ts.ranges.pop_back();
    if (ts.forward_entry_end <= e.start_ns) ts.forward_entry_end = INT64_MIN;
    const At a{i, e, f, ts, in_win, ts.node.end > e.start_ns, ts.optimizer_end > e.start_ns};
    switch (e.kind) {
      case EventKind::kRange:
        range(a);
        break;
      case EventKind::kHostOp:
        hostOp(a);
        break;
      case EventKind::kRuntimeCall:
      case EventKind::kDriverCall:
        call(a);
        break;
      default:
        break;
    }
  }
  for (uint32_t tr = 0; tr < threads_.size(); ++tr) finishNode(threads_[tr], tr);
  finishCheckpoint();
  finishCasts();
  return std::move(n_);
}

int64_t HostWalk::kernelNs(int64_t corr) const {
  uint32_t w = corr >= 0 ? ix_.work_of.find(corr) : IdMap::kNone;
  return w != IdMap::kNone && ev_[w].kind == EventKind::kKernel ? ev_[w].dur_ns : 0;
}

// A range: an optimizer step (its name counted), a DataLoader fetch, or one that may name a sync's caller.
void HostWalk::range(const At& a) {
  const Event& e = a.e;
  if (e.hasRole(kRoleOptimizerStep)) {
    a.ts.optimizer_end = e.end_ns();
    a.ts.scaler_pending = false;
    if (a.in_win) {
      ++n_.optimizer_steps;
      ++n_.optimizer_names[optimizerNameOf(t_.strings.view(e.name))];
    }
  }
  if (e.hasRole(kRoleDataLoading) && a.in_win) {
    ++n_.loaders;
    if (e.hasRole(kRoleLoaderInProcess)) ++n_.loaders_in_process;
  }
  if (!e.hasRole(kRoleStep)) a.ts.ranges.push_back({e.end_ns(), a.i, kNoCopy});
}

// An operator: in the order each reads the thread's state, the backward node it opens, a
// checkpoint's entry, a recomputed forward operator, autocast's re-dispatch, the cast sites, the
// grad scaler and the optimizer step's operators.
void HostWalk::hostOp(const At& a) {
  const bool top = a.ts.ops.empty();
  backwardNode(a, top);
  checkpointEntry(a, top);
  if (top) a.ts.last_top_end = a.e.end_ns();
  if (a.in_node) recomputedForward(a);
  if (a.f & kGemmOp) {  // autocast re-dispatches the operator under its own name
    if (!a.ts.ops.empty() && ev_[a.ts.ops.back().event].name == a.e.name)
      ++n_.autocast_hits;
    else if (a.in_win)
      ++n_.gemm_ops;
  }
  // SDPA calls in forward (a recomputation inside a backward node re-runs them: not counted again).
  if ((a.f & (kSdpa | kSdpaMath)) && a.in_win && !a.in_node && (top || ev_[a.ts.ops.back().event].name != a.e.name))
    ++((a.f & kSdpa) ? n_.sdpa_calls : n_.sdpa_math_calls);
  if (casts_ && a.in_win && !a.in_optimizer) castSites(a, top);
  if (a.f & kUnscale) a.ts.scaler_pending = true;
  if (a.in_optimizer && a.in_win) optimizerOp(a, top);
  a.ts.ops.push_back({a.e.end_ns(), a.i, kNoCopy});
}

// A top-level backward node closes the thread's last one and opens its own; the first of a run of
// them is one backward pass, which a top-level operator on a step thread ends.
void HostWalk::backwardNode(const At& a, bool top) {
  const Event& e = a.e;
  if (a.f & kEvalFn) {
    if (top) {
      finishNode(a.ts, e.track);
      a.ts.node_has_gemm = false;
      a.ts.node.begin = e.start_ns;
      a.ts.node.end = e.end_ns();
      a.ts.node.in_window = a.in_win;
      if (!in_burst_ && a.in_win) ++n_.backward_passes;
      if (a.in_win && t_.strings.view(e.name).ends_with("AccumulateGrad")) ++n_.accumulate_grads;
      in_burst_ = true;
    }
  } else if (top && step_track_[e.track]) {
    in_burst_ = false;
  }
}

// A non-reentrant checkpoint's entry in forward: its setup (RNG state, hooks) in the host time
// before it, and the entry itself.
void HostWalk::checkpointEntry(const At& a, bool top) {
  if (!(a.f & kCheckpointEntry) || !a.in_win || a.in_node || !checkpoint_) return;
  ++n_.checkpoint_entries;
  checkpoint_->wrapper.push_back(
      {a.e.track, top && a.ts.last_top_end != INT64_MIN ? std::max(a.ts.last_top_end, hostBegin(win_)) : a.e.start_ns,
       a.e.end_ns()});
}

// Inside a backward node: a named checkpoint, or the outermost forward operator it re-runs.
void HostWalk::recomputedForward(const At& a) {
  const Event& e = a.e;
  if (a.f & kCheckpoint) a.ts.node.named_checkpoint = true;
  if (fwd_[e.name] && a.ts.forward_entry_end == INT64_MIN) {
    a.ts.node.forward_mask |= 1u << (fwd_[e.name] - 1);
    a.ts.forward_entry_end = e.end_ns();
    a.ts.node.first_forward = std::min(a.ts.node.first_forward, e.start_ns);
    a.ts.node.last_forward_end = std::max(a.ts.node.last_forward_end, e.end_ns());
  }
}

// Where autocast would cast (CastSite): a backward node's first GEMM; in forward, each top-level
// GEMM operator's parameters and its FP32 inputs, a linear's bias when aten::addmm runs under it (a
// convolution's when aten::add_ does), an explicit cast of a BF16 activation (top-level aten::to that
// copies nothing in FP32).
void HostWalk::castSites(const At& a, bool top) {
  ThreadState& ts = a.ts;
  if (a.in_node) {
    if ((a.f & kGemmOp) && !ts.node_has_gemm) {
      ts.node_has_gemm = true;
      bwd_casts_.push_back({a.e.track, ts.node.begin, 0});
    }
    return;
  }
  if (ts.cast_window != win_) {  // a new window: FP32 data, nothing open
    ts.cast_window = win_, ts.act_fp32 = true, ts.in_gemm_run = false;
    ts.open_site = SIZE_MAX, ts.open_is_to = false;
  }
  if (top) ts.open_site = SIZE_MAX, ts.open_is_to = false;
  if (top && (a.f & kGemmOp)) {
    const std::string_view n = t_.strings.view(a.e.name);
    const bool conv = has(n, "conv"), linear = n == "aten::linear", addmm = n == "aten::addmm";
    const bool sdpa = n == "aten::scaled_dot_product_attention";  // reads the GEMMs' outputs before it
    const int inputs = sdpa ? 3 : (linear || conv || addmm) ? 1 : 2;
    // The parameters autocast casts (once a forward, cached): a linear's or convolution's weight (its
    // bias when aten::addmm runs under it), both of a top-level addmm (a Conv1D's bias and weight).
    const int params = addmm ? 2 : linear || conv ? 1 : 0;
    if (!ts.in_gemm_run || sdpa) ts.run_input_fp32 = ts.act_fp32;
    fwd_casts_.push_back({a.e.track, a.e.start_ns, static_cast<double>(params + (ts.run_input_fp32 ? inputs : 0))});
    if (linear || conv) ts.open_site = fwd_casts_.size() - 1;
    ts.act_fp32 = false;
    ts.in_gemm_run = !sdpa;
  } else if (top && (a.f & kAutocastFp32)) {
    ts.act_fp32 = true;  // FP32 out: autocast's FP32 list
    ts.in_gemm_run = false;
  } else if (top && t_.strings.view(a.e.name) == "aten::to") {
    // An explicit cast that does nothing in FP32 (`.float()`, `.to(torch.float32)`) casts a lower-precision
    // activation under autocast (a copy under it, found below, is one that FP32 makes too).
    if (!ts.act_fp32) {
      fwd_casts_.push_back({a.e.track, a.e.start_ns, 1.0});
      ts.open_site = fwd_casts_.size() - 1;
      ts.open_is_to = true;
    }
    ts.act_fp32 = true;
    ts.in_gemm_run = false;
  } else if (top && !(a.f & kViewOp)) {
    ts.in_gemm_run = false;  // another operator reads the GEMM's output (BF16 unless the list above)
  } else if (!top && ts.open_site != SIZE_MAX && ts.open_is_to && t_.strings.view(a.e.name) == "aten::_to_copy") {
    // It copies in FP32 too (an integer mask made float, a batch moved to the GPU): not autocast's, and its
    // output is FP32 data as the FP32 trace shows.
    fwd_casts_[ts.open_site].casts = 0;
    ts.open_site = SIZE_MAX;
  } else if (!top && ts.open_site != SIZE_MAX && !ts.open_is_to) {
    // A bias: a linear's when aten::addmm runs under it, a convolution's when cuDNN's output gets it added.
    const std::string_view n = t_.strings.view(a.e.name);
    if (n == "aten::addmm" || n == "aten::add_") {
      fwd_casts_[ts.open_site].casts += 1;
      ts.open_site = SIZE_MAX;
    }
  }
}

// An operator inside the optimizer step: the implementation it shows (fused, foreach, loop).
void HostWalk::optimizerOp(const At& a, bool top) {
  if (a.f & kFusedOpt)
    ++n_.fused_ops;
  else if (a.f & kForeach)
    ++n_.foreach_ops;
  else if (top && !(a.f & kOptTrivial))
    ++n_.loop_ops;
}

// A runtime or driver call: a graph launch, a launch of GPU work, a blocking call.
void HostWalk::call(const At& a) {
  if (a.e.hasRole(kRoleGraphLaunch)) {
    ++n_.graph_launches_all;
    if (a.in_win) ++n_.graph_launches;
    return;
  }
  if (a.e.correlation >= 0) launch(a);
  if (a.e.hasRole(kRoleSyncCall) && a.in_win) hostSync(a);
}

// A launch: the copy it starts (for a later sync's copy kind), the kernel time it adds to the
// optimizer, the recomputed forward or the forward.
void HostWalk::launch(const At& a) {
  uint32_t w = ix_.work_of.find(a.e.correlation);
  if (w == IdMap::kNone) return;
  if (ev_[w].kind == EventKind::kMemcpy && !a.ts.ops.empty())
    a.ts.ops.back().copy = copyKindOf(t_.strings.view(ev_[w].name));
  if (!a.in_win || ev_[w].kind != EventKind::kKernel) return;
  if (a.in_optimizer)
    ++n_.optimizer_launches;
  else if (a.in_node) {
    if (a.ts.forward_entry_end != INT64_MIN) a.ts.node.recompute_gpu_ns += kernelNs(a.e.correlation);
  } else if (ev_[w].collective == 0) {
    n_.forward_gpu_ns += kernelNs(a.e.correlation);
  }
}

// A blocking call in the steps: the synchronizing operator, the innermost one, through its thin
// wrappers (item -> _local_scalar_dense, to -> _to_copy -> copy_); its caller: the outermost
// operator around that (backward nodes named by their function), else the innermost range.
void HostWalk::hostSync(const At& a) {
  const ThreadState& ts = a.ts;
  std::string op, caller;
  uint8_t copy = kNoCopy;
  uint32_t op_event = UINT32_MAX;
  if (!ts.ops.empty()) {
    size_t k = ts.ops.size() - 1;
    while (k > 0 && (flags_[ev_[ts.ops[k - 1].event].name] & kSyncChain) &&
           (flags_[ev_[ts.ops[k].event].name] & kSyncChain))
      --k;
    op_event = ts.ops[k].event;
    op = std::string(t_.strings.view(ev_[op_event].name));
    for (size_t j = k; j < ts.ops.size(); ++j)
      if (ts.ops[j].copy != kNoCopy) copy = ts.ops[j].copy;
    for (size_t j = 0; j < k; ++j) {
      uint32_t n = ev_[ts.ops[j].event].name;
      if (flags_[n] & kEvalFn) continue;
      caller = std::string(t_.strings.view(n));
      break;
    }
  }
  if (caller.empty() && !ts.ranges.empty()) caller = std::string(t_.strings.view(ev_[ts.ranges.back().event].name));
  if (caller.empty() && ts.scaler_pending) caller = "GradScaler";
  SyncAcc& acc = n_.syncs[{op, std::string(t_.strings.view(a.e.name)), caller, std::string(copyKindName(copy))}];
  acc.wait_ns += a.e.dur_ns;
  if (op_event == UINT32_MAX) {
    ++acc.count;
    acc.host_ns += a.e.dur_ns;
  } else if (ts.last_sync_op != op_event) {
    ++acc.count;
    acc.host_ns += ev_[op_event].dur_ns;
    a.ts.last_sync_op = op_event;
  }
}

// Closes the thread's backward node: a recomputing one (a named checkpoint, or two kinds of forward
// operator re-run) counts, with its re-run span and the wrapper's host time around it.
void HostWalk::finishNode(ThreadState& ts, uint32_t track) {
  BackwardNode& n = ts.node;
  if (n.end != INT64_MIN && n.in_window && (n.named_checkpoint || std::popcount(n.forward_mask) >= 2)) {
    ++n_.recompute_nodes;
    n_.recompute_gpu_ns += n.recompute_gpu_ns;
    if (checkpoint_ && n.first_forward < n.last_forward_end) {
      checkpoint_->recompute.push_back({track, n.first_forward, n.last_forward_end});
      // The node's host time around the re-run forward: the unpack hook that starts it, the
      // recomputation's bookkeeping after it, and the node's own backward (which the edit keeps).
      if (n.begin < n.first_forward) checkpoint_->wrapper.push_back({track, n.begin, n.first_forward});
      if (n.last_forward_end < n.end) checkpoint_->wrapper.push_back({track, n.last_forward_end, n.end});
    }
  }
  n = BackwardNode{};
  ts.forward_entry_end = INT64_MIN;
}

// The checkpoint regions in start order.
void HostWalk::finishCheckpoint() {
  if (!checkpoint_) return;
  auto byStart = [](const HostRegion& a, const HostRegion& b) {
    return a.begin_ns != b.begin_ns ? a.begin_ns < b.begin_ns : a.track < b.track;
  };
  std::sort(checkpoint_->recompute.begin(), checkpoint_->recompute.end(), byStart);
  // The wrapper's host cost was measured for the non-reentrant implementation only: without its
  // entries in forward, no wrapper regions.
  if (n_.checkpoint_entries == 0) checkpoint_->wrapper.clear();
  std::sort(checkpoint_->wrapper.begin(), checkpoint_->wrapper.end(), byStart);
}

// The cast sites in time order, the backward casts as many as the forward ones, spread over the
// backward nodes; none where autocast already runs (its operators re-dispatched under their own name).
void HostWalk::finishCasts() {
  if (!casts_) return;
  casts_->clear();
  double total = 0;
  for (const CastSite& c : fwd_casts_) total += c.casts;
  if (n_.autocast_hits == 0 && total > 0) {
    for (CastSite& c : bwd_casts_) c.casts = total / static_cast<double>(bwd_casts_.size());
    casts_->reserve(fwd_casts_.size() + bwd_casts_.size());
    for (const auto* v : {&fwd_casts_, &bwd_casts_})
      for (const CastSite& c : *v)
        if (c.casts > 0) casts_->push_back(c);
    std::sort(casts_->begin(), casts_->end(), [](const CastSite& a, const CastSite& b) { return a.at_ns < b.at_ns; });
  }
}

}  // namespace

HostCounts walkHostEvents(const RankAnalysis& ra, const std::vector<uint32_t>& flags, CheckpointRegions* checkpoint,
                          std::vector<CastSite>* casts) {
  return HostWalk(ra, flags, checkpoint, casts).run();
}

}  // namespace gpudoctor::job_profile_detail
