// The replay engine: a dependency graph of every host call and every piece of GPU work of each
// rank, replayed in dependency order. Edges: host thread order (the gaps between calls are host
// work, kept), launch -> GPU work (correlation), stream order, cross-stream waits (inferred where
// a piece of work starts right after work on another stream ends and nothing else explains the
// wait; Kineto records no event ids by default), hand-offs between host threads (a thread idle
// until another thread's call ended: autograd's backward thread), synchronizing calls -> the GPU work they waited
// for, and collectives joined across ranks by process group and sequence number (a collective
// ends once its last member arrived plus its transfer time). Replaying the unmodified graph
// reproduces the traced timeline; an edit (ReplayEdits) changes durations and the graph follows.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/kernel_class.h"
#include "analysis/run_analysis.h"
#include "analysis/steady_state.h"

namespace gpudoctor {

// What to change before replaying. Defaults: nothing.
struct ReplayEdits {
  std::array<double, kKernelClassCount> kernel_scale;  // kernel durations x this, per class
  // ... then, per class, at least this long (a kernel's shortest run at the new rate; never longer
  // than it was) and this much longer (work an edit adds per kernel: autocast's casts per GEMM).
  std::array<int64_t, kKernelClassCount> kernel_floor_ns{};
  std::array<int64_t, kKernelClassCount> kernel_add_ns{};
  // ... and by kind (analysis/precision_kinds.h): batch norms x this on top of their class's scale;
  // convolutions of a GEMM class x this instead of their class's scale (<= 0: the class's); a cuDNN
  // RNN's GEMM-class kernels x recurrent_gemm_scale and its other kernels x recurrent_other_scale,
  // instead of their class's (<= 0: the class's).
  double batch_norm_scale = 1, convolution_scale = 0, recurrent_gemm_scale = 0, recurrent_other_scale = 0;
  double memcpy_scale = 1, memset_scale = 1;
  double pageable_htod_scale = 1;  // host-to-device copies from pageable memory (x memcpy_scale too) ...
  double pageable_htod_gbps = 0;   // ... or, > 0, at this rate where the copy's bytes are known (never longer)
  // The profiler's own host cost, removed to replay the job as it runs un-profiled: per recorded
  // host event (operator, annotation, Python function) taken from the host gap it starts in, and
  // per runtime/driver call (the tracer's callbacks) taken from the call. Never below zero.
  int64_t host_event_overhead_ns = 0;
  // ... per recorded host event inside an in-process DataLoader's fetch (operators on CPU tensors that
  // launch nothing), instead of host_event_overhead_ns; < 0: that.
  int64_t loader_event_overhead_ns = -1;
  int64_t api_call_overhead_ns = 0;
  // ... per call that launches no GPU work and waits for none (cudaEventRecord, cudaGetErrorString,
  // cudaFuncGetAttributes, ...), instead of api_call_overhead_ns; < 0: api_call_overhead_ns.
  int64_t idle_call_overhead_ns = -1;
  // ... per cudaFuncGetAttributes (measured at 4-5x another call that launches nothing: most of it
  // inside the call's span), instead of the two above; < 0: as they say.
  int64_t attr_call_overhead_ns = -1;
  // ... per rank (index into RunAnalysis::ranks) x this: the profiler's cost at that process's host
  // speed (ReplayModel::hostGapP25). Empty: the same everywhere.
  std::vector<double> rank_profiler_scale;
  // ... and on the GPU: CUPTI's kernel records stretch the gap before each piece of GPU work that
  // follows other work on its stream (or on another stream it waited for) by up to this.
  int64_t gpu_gap_overhead_ns = 0;
  // ... and in CUDA graph replays: CUPTI instruments each node as the graph is launched, so the
  // launch call takes this much longer per node it launched, and the GPU idles between the graph's
  // kernels while the call is still submitting them: such gaps, and the wait from the launch
  // call's start to each of its nodes, are capped at graph_gap_cap_ns (negative: kept as traced).
  int64_t graph_node_overhead_ns = 0;
  int64_t graph_gap_cap_ns = -1;
  // Fixes as graph edits. Loader workers: the host time inside in-process DataLoader ranges leaves
  // the training thread (the workers' production rate is not in the trace: assumed to keep up).
  bool loader_off_thread = false;
  // The loader's worker pool: the training thread's waits inside multi-process DataLoader fetches
  // cost only a fetch's hand-off (the trace's shortest fetch), and the pool delivers a batch every
  // loader_period_ns (0: not modeled), so no step is shorter than that (steady_state.h).
  bool drop_loader_waits = false;
  // The host's own work (analysis/host_work.h) leaves the training thread (into DataLoader workers,
  // whose period loader_period_ns then bounds).
  bool host_work_off_thread = false;
  int64_t loader_period_ns = 0;
  // No blocking waits: synchronizing calls and synchronous copies stop waiting for the GPU
  // (values logged every N steps, torch.where instead of boolean masks, pinned non-blocking copies).
  bool drop_sync_waits = false;
  // ... only the synchronous host-to-device copies from pageable memory (pinned, non-blocking).
  bool drop_copy_waits = false;
  // CUDA graphs: launch calls and the host gaps between them cost nothing (one graph launch
  // replays the step's work); the loader's and the syncs' host time stay.
  bool free_launches = false;
  // ... except the optimizer steps' operators and launches, which stay eager (GradScaler's step
  // reads found_inf on the host: not capturable; forward and backward graphed alone).
  bool graph_keeps_optimizer = false;
  // ... and the loss's host work and launches around each backward pass (RankGraph::loss_regions):
  // the model graphed alone leaves the loss, its backward nodes and what runs between them eager.
  bool graph_keeps_loss = false;
  // ... and what each graphed call still costs the host (the model graphed alone: static inputs
  // copied in, the graph launched, an output detached per parameter, and each parameter's gradient
  // handed to .grad by autograd), as many recorded operators' worth of the host's time per
  // AccumulateGrad node (one per parameter per backward pass), where that node was. 0: nothing.
  double graphed_param_ops = 0;
  // Per rank: the un-profiled host's time per recorded operator, ns (the un-profiled replay's host
  // step over ReplayModel::operatorsPerStep, where the host sets the step), the unit of
  // graphed_param_ops. Empty or 0 for a rank: kGraphedProbeOpNs, the probe host's.
  std::vector<double> rank_op_ns;
  // GPU time added to each kernel of the optimizer steps (a captured loop or foreach step runs with
  // capturable=True: its bias corrections become kernels of their own).
  int64_t optimizer_kernel_add_ns = 0;
  // Fused optimizer: the host time of each optimizer step from its first operator to its last
  // operator's end (the per-parameter or foreach operators and their launches) becomes the cost of
  // two operators there (the step counters' update and the fused kernel's launch, at the median
  // operator cost of that step); the time before the first operator (gathering the parameters)
  // stays.
  bool fused_optimizer = false;
  // GPU work launched inside the optimizer steps x this (fused, or a captured foreach step).
  double optimizer_gpu_scale = 1;
  // Fused attention (scaled_dot_product_attention) in place of a materialized one: the score
  // matrix's kernels (the softmax and its backward, and the masking, scaling and dropout kernels
  // between the attention's batched GEMMs) and their launches cost nothing; the batched GEMMs stay
  // (the fused kernel does their math) x attention_gemm_scale (another precision's rate).
  bool fused_attention = false;
  double attention_gemm_scale = 1;
  // ... and, kept, the score matrix's kernels x this instead of their class's scale (<= 0: the class's).
  double attention_scores_scale = 0;
  // Fused attention kernels that run in FP32 (PyTorch's memory-efficient fmha_cutlass*_f32: the only
  // FP32 fused attention) x this (another precision's rate; kernel_floor_ns of the fused-attention
  // class bounds it below).
  double fused_attention_fp32_scale = 1;
  // bf16 autocast's casts on the host: this much host time per cast where autocast would cast
  // (RankAnalysis::autocast_casts: before each lower-precision forward operator, at each explicit
  // cast of a lower-precision activation, at each backward node with matrix work), inside the host
  // gap that holds the site. 0: none.
  int64_t autocast_cast_ns = 0;
  // No activation checkpointing: the forward operators that backward passes re-run
  // (RankAnalysis::recompute), their host time, launches and GPU work cost nothing; the backward
  // math stays (it is the same with saved activations).
  bool drop_recompute = false;
  // ... and the checkpoint wrapper's own host work (RankAnalysis::checkpoint.wrapper: hooks, RNG
  // state, the recomputation's bookkeeping), this much per checkpointed block, taken evenly from
  // the host time of the wrapper's regions (at most all of it). 0: kept.
  int64_t checkpoint_block_ns = 0;
  // Grouped MoE dispatch (a fixed-capacity dispatch with the experts' GEMMs batched) in place of
  // the per-expert loops of analysis/moe_dispatch.h: their synchronizing calls stop waiting for the
  // GPU; their host time and calls, forward and backward, shrink to moe_blocks_kept experts' worth
  // of each loop (the grouped dispatch's own operators); the GPU work launched in them x
  // moe_gpu_scale (each expert's tokens padded to its capacity). <= 0: off.
  double moe_blocks_kept = 0;
  double moe_gpu_scale = 1;
  // GEMM dimensions padded to a multiple of 64: the GEMM-class kernels that ran on operands aligned
  // to 2, 4 or 8 bytes (PrecisionKind::kMisalignedGemm2/4/8, index misalignedGemmIndex; a
  // materialized attention's are not of a GEMM class) x this (the aligned kernels' time for the same
  // work). <= 0: off.
  std::array<double, 3> misaligned_gemm_scale{};
  // Tensors in channels_last: the NCHW<->NHWC layout transposes around each convolution (cuDNN's, MIOpen's)
  // (PrecisionKind::kLayoutTranspose) cost nothing; their launch calls stay. The NCHW batch-norm kernels
  // (PrecisionKind::kBatchNorm) x nchw_batch_norm_scale (and x batch_norm_scale): cuDNN's NHWC ones for the same work.
  bool drop_layout_transposes = false;
  double nchw_batch_norm_scale = 1;
  // ... or, where they stay, x this, with cuDNN's other tensor transforms (PrecisionKind::kTensorTransform)
  // (bf16 tensors: half the bytes to move).
  double layout_transpose_scale = 1;
  // Sparse embedding gradients, at best: the zero fills of the dense tables' gradients
  // (analysis/embedding_grads.h) cost nothing (with optimizer_gpu_scale for the tables' update).
  bool drop_embedding_fills = false;
  // ... and the sparse path's own host work, this much per table and step, charged to the host at each
  // dense embedding backward operator's start (0: none).
  int64_t sparse_embedding_table_ns = 0;
  // Gradient accumulation merged: the A micro-batches of each optimizer step become one of A times
  // the size (micro_batch_merge = A; 1: off). Host time, calls and launches outside the optimizer
  // step and the in-process loader x 1/A (one forward and backward pass instead of A); each kernel
  // outside the optimizer runs once at A times the work: a kernel of t = L + w becomes L + A w, so
  // each of the A traced copies keeps t - min(t, L) (1 - 1/A), L = merge_kernel_fixed_ns (a kernel's
  // fixed cost: launch, ramp, tail). Copies and collectives keep their time (the same bytes).
  int micro_batch_merge = 1;
  int64_t merge_kernel_fixed_ns = 0;
  // Per rank (index into RunAnalysis::ranks): its compute kernels (not collectives, not copies)
  // x this (a straggler at its peers' pace). Empty: none.
  std::vector<double> rank_compute_scale;
  // ... and its host time (the gaps between its calls and the calls themselves) x this.
  std::vector<double> rank_host_scale;
  ReplayEdits() { kernel_scale.fill(1.0); }
};

// What the replayed step's critical path is made of, in the ranking's categories.
enum class PathCategory : uint8_t { kCompute, kCommunication, kHostLaunch, kInput, kSync, kCopies, kOtherIdle };
constexpr int kPathCategoryCount = 7;
// "compute", "communication", "host_launch", "input", "sync", "copies", "other_idle".
std::string_view pathCategoryName(PathCategory c);
// The group a ranking category belongs to: "compute", "communication", "copies" stay themselves;
// host_launch, input, sync and other_idle are "host" (the GPU idles with nothing queued).
std::string_view categoryGroup(std::string_view category);
// A step's figures split into the ranking's categories, in PathCategory order (the loader's share of
// host and sync idle is input); they add up to compute + exposed communication + exposed copies +
// idle, the wall time. T: int64_t (exact) or double (means).
template <class T>
std::array<T, kPathCategoryCount> rankingCategories(T compute, T comm_exposed, T copies, T idle_host, T idle_sync,
                                                    T idle_dependency, T idle_other, T idle_host_loader,
                                                    T idle_sync_loader) {
  return {compute,
          comm_exposed,
          idle_host - idle_host_loader,
          idle_host_loader + idle_sync_loader,
          idle_sync - idle_sync_loader,
          copies,
          idle_dependency + idle_other};
}

// One step window, traced and replayed.
struct ReplayedWindow {
  int64_t number = -1;      // ProfilerStep number, -1 for the fallback window
  int64_t traced_ns = 0;    // the host's step (steady_state.h), traced
  int64_t replayed_ns = 0;  // ... and replayed
};

struct RankReplay {
  int rank = -1;
  std::vector<ReplayedWindow> windows;
};

// How the graph was built (for the report and the tests).
struct ReplayGraphStats {
  int64_t calls = 0, gpu_work = 0;
  int64_t bound_by_launch = 0, bound_by_stream = 0, bound_by_cross_stream = 0, unbound = 0;
  int64_t sync_waits = 0;         // calls that wait for GPU work
  int64_t queue_waits = 0;        // launch calls that waited for a slot in a full launch queue
  int64_t event_waits = 0;        // GPU work that waits for another stream's (inferred from event record/wait calls)
  int64_t thread_handoffs = 0;    // calls that wait for another host thread
  int64_t collective_groups = 0;  // collectives joined across ranks
};

// A trace of more step windows than this replays the first this many (and the launches of the one
// after them): the steady state is reached within a few steps, and the replay's cost then no longer
// grows with the trace's length. Replay::windows_replayed / windows_total say so.
inline constexpr size_t kReplayMaxSteps = 32;

// The host's time per recorded operator where ReplayEdits::rank_op_ns does not say: the eager pass's
// on the host that measured the graphed calls' cost (diagnosis/fixes/cuda_graphs.h).
inline constexpr double kGraphedProbeOpNs = 2104;

struct Replay {
  bool available = false;
  size_t windows_replayed = 0, windows_total = 0;  // step windows, the most over ranks
  std::string reason;                              // why not, when unavailable
  std::vector<RankReplay> ranks;
  // The step: the steady-state period of the loop (steady_state.h; each figure the median over steps
  // of each step's mean over ranks), traced and replayed. The replay never predicts a step shorter
  // than the busiest stream's work per step after the edit.
  double traced_step_ns = 0;
  double replayed_step_ns = 0;
  SteadyState traced, replayed;
  double worst_error = 0;  // largest |replayed - traced| / traced over windows
  // The critical path of the replayed steps by category, mean ns per step (the parts add up to
  // replayed_step_ns), and the category with the most.
  std::array<double, kPathCategoryCount> path_ns{};
  PathCategory leading = PathCategory::kCompute;
  ReplayGraphStats stats;
};

// A fetch longer than this waited for its batch (a ready batch's hand-off takes 0.05-0.5 ms in the
// lab's traces; where a pool's every fetch waits, the shortest fetch is a wait, not a hand-off).
inline constexpr int64_t kLoaderWaitedNs = 1'000'000;
// The longest hand-off of a batch that was ready in the lab's traces: where every fetch of the steps
// takes longer, each waited, however briefly, and the pool paces the training thread (a pool just
// slower than the traced host: efficientnet_jpeg_workers2 on one H100 host, every fetch 1.0-1.1 ms
// against 0.04-0.06 ms with 8 workers).
inline constexpr int64_t kLoaderReadyHandoffMaxNs = 500'000;

// The DataLoader as the trace shows it, over the step windows (means over ranks).
struct LoaderPool {
  bool multiprocess = false;    // fetches from worker processes
  double wait_per_step_ns = 0;  // multi-process: the training thread inside fetches, per step (mean over steps)
  double handoff_ns = 0;        // ... the shortest fetch: a batch that was ready
  double host_step_ns = 0;      // the host's step (mean over steps), traced
  // The pool's delivery period: from the first to the last fetch that waited for its batch (longer
  // than kLoaderWaitedNs), the time over the batches fetched in between (means over ranks with two
  // such fetches; 0: none has). A pool of W workers delivers in bursts, W batches at once and then a
  // long wait, so the mean step of a window that does not hold whole bursts is off by up to a
  // burst's wait over the window's steps; two waited fetches are whole bursts apart. A fetch that
  // waited ends a hand-off after its batch was ready, so the hand-offs cancel.
  double delivery_period_ns = 0;
  // The shortest fetch in the replayed windows (the least over ranks with fetches there; 0: none), and
  // the number of those fetches: every fetch longer than kLoaderReadyHandoffMaxNs waited for its batch.
  double shortest_fetch_ns = 0;
  int64_t fetches = 0;
  int64_t waited = 0;  // ... of which, fetches longer than kLoaderWaitedNs
  // Whether the steps give the pool's period: two fetches that waited (whole bursts apart), or every
  // fetch waiting (the pool paces each step). Otherwise a pool that sets the step is known only by the
  // window's mean step, which a burst's wait, or a prefetch queue still emptying, moves either way.
  bool periodIdentified() const { return delivery_period_ns > 0 || everyFetchWaited(); }
  bool everyFetchWaited() const { return fetches >= 2 && shortest_fetch_ns > kLoaderReadyHandoffMaxNs; }
};

// The dependency graph of a run, built once (the run's traces must outlive it); each replay
// evaluates it with a set of edits, on any number of threads at once.
class ReplayModel {
 public:
  explicit ReplayModel(const RunAnalysis& run);
  ~ReplayModel();
  ReplayModel(const ReplayModel&) = delete;
  ReplayModel& operator=(const ReplayModel&) = delete;
  Replay replay(const ReplayEdits& edits = {}) const;
  // Per rank: the 25th percentile of the host time on a thread before each recorded host event
  // (since the thread's last event start or end), ns. Under the profiler
  // these gaps hold its per-event cost and the dispatch around it: the host's speed as traced.
  // 0 also where a rank has fewer than 100 such events (a graphed step: too few to tell).
  std::vector<int64_t> hostGapP25() const;
  // Per rank: whether its trace was recorded with options whose own work falls in the gaps above
  // (with_stack's Python frames split them, record_shapes' input records lengthen them): then the
  // gaps read those options' work as much as the host's speed.
  std::vector<bool> profilerOptionsInGaps() const;
  // Per rank: the median duration of the runtime/driver calls that launch one kernel (and neither
  // wait nor replay a graph), ns: the same call in every job, so the host's speed as traced, with
  // CUPTI's cost per call in it. 0 where a rank has fewer than 100 such calls.
  std::vector<int64_t> launchCallP50() const;
  // Per rank: the median time from an operator's start to its first child operator's start, ns: the
  // dispatcher's and the profiler's work inside C++ operators, where no Python frame falls (with_stack
  // or not), so the host's speed as traced. 0 where a rank has fewer than 100 such pairs.
  std::vector<int64_t> dispatchP50() const;
  // Per rank: the recorded operators and annotations (not Python frames) per replayed step, all threads.
  std::vector<double> operatorsPerStep() const;
  // Per step (the ranks' mean): the GPU time of a materialized attention's kernels (its batched
  // GEMMs, softmax, and the score matrix's kernels between them) and the host time of the calls that
  // launch only score-matrix kernels: what a fused attention kernel replaces.
  int64_t materializedAttentionNs() const;
  // What the trace shows of the DataLoader (its fetches inside the step windows).
  LoaderPool loaderPool() const;
  // One replay per set of edits, on up to `threads` threads (0: the hardware's, at most 4).
  std::vector<Replay> replayAll(const std::vector<ReplayEdits>& edits, unsigned threads = 0) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Builds the graph and replays every rank of the run with the edits applied.
Replay replayRun(const RunAnalysis& run, const ReplayEdits& edits = {});

}  // namespace gpudoctor
