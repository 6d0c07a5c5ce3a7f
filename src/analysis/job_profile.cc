#include "analysis/job_profile.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

#include "analysis/run_analysis.h"

#include "model/comm_kernels.h"
namespace gpudoctor {

// The profile names framework features, so it reads the framework's own operator and range names
// (PyTorch's: aten::*, autograd::engine::*, Optimizer.step#*, ...), all of them in the table
// below, classified once per interned string. That is deliberately not done with reader roles:
// the features are PyTorch's by definition, a source without these names gets "unknown", and
// Event::roles has one free bit for some twenty names. Steps, loader, optimizer ranges, blocking
// calls, collectives and graph launches still come from the reader's roles.
namespace {

bool has(std::string_view s, std::string_view w) { return s.find(w) != std::string_view::npos; }
bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

enum NameFlag : uint32_t {
  kPytorch = 1u << 0,      // aten::*, autograd::*, ProfilerStep#*, "PyTorch Profiler"
  kEvalFn = 1u << 1,       // autograd::engine::evaluate_function: one backward node
  kGemmOp = 1u << 2,       // operators torch.autocast wraps (re-dispatched under the same name)
  kScaler = 1u << 3,       // GradScaler's operators and kernels
  kUnscale = 1u << 4,      // GradScaler.unscale_ (its found_inf check follows)
  kDdp = 1u << 5,          // DistributedDataParallel's ranges / reducer operators / module
  kFsdp = 1u << 6,         // FullyShardedDataParallel (FSDP1 ranges, FSDP2 FSDP::*)
  kZero = 1u << 7,         // DeepSpeed (ZeRO)
  kCompile = 1u << 8,      // torch.compile regions, compiled autograd functions, inductor kernels
  kCheckpoint = 1u << 9,   // torch.utils.checkpoint named (reentrant backward node, its Python frames)
  kFusedOpt = 1u << 10,    // aten::_fused_adamw_, _fused_adam_, _fused_sgd_, ...
  kForeach = 1u << 11,     // aten::_foreach_*
  kSyncChain = 1u << 12,   // thin wrappers a sync is reported through (item -> _local_scalar_dense, to -> copy_)
  kOptTrivial = 1u << 13,  // bookkeeping inside an optimizer step (CPU step counters, allocation)
  kAllReduce = 1u << 14,   // collective kinds (from the collective's name or the NCCL kernel's)
  kAllGather = 1u << 15,
  kReduceScatter = 1u << 16,
  kCast = 1u << 17,        // aten::to / aten::_to_copy
  kAtenKernel = 1u << 18,  // a kernel of PyTorch's ATen (demangled at::native::...): PyTorch without profiler operators
  kXlaKernel = 1u << 19,   // an XLA fusion kernel (loop_*_fusion, input_*_fusion, gemm_fusion_*, fusion_N): JAX/XLA
  kCheckpointEntry = 1u << 20,  // _NoopSaveInputs: a non-reentrant checkpoint's entry in forward
  kAutocastFp32 = 1u << 21,     // on autocast's FP32 list: its output is FP32 (normalization, softmax, losses)
};

// XLA names its kernels after the fusion they run: loop_add_fusion, input_reduce_fusion_2,
// gemm_fusion_dot_4, fusion_28, wrapped_transpose (seen in a JAX recording on an H200).
bool xlaKernelName(std::string_view n) {
  auto fusionNumber = [](std::string_view r) {  // "", or "_" followed by digits
    if (r.empty()) return true;
    if (r[0] != '_' || r.size() < 2) return false;
    for (char c : r.substr(1))
      if (c < '0' || c > '9') return false;
    return true;
  };
  if (startsWith(n, "gemm_fusion") || startsWith(n, "wrapped_")) return true;
  if (startsWith(n, "fusion")) return fusionNumber(n.substr(6));
  if (startsWith(n, "loop_") || startsWith(n, "input_")) {
    size_t at = n.rfind("_fusion");
    return at != std::string_view::npos && fusionNumber(n.substr(at + 7));
  }
  return false;
}

// Forward operators that a backward formula does not call: seen inside a backward node, they are
// the forward pass recomputed (activation checkpointing). Index + 1 is a bit of a node's mask.
constexpr std::string_view kForwardEntry[] = {
    "aten::linear",    "aten::layer_norm", "aten::group_norm", "aten::batch_norm", "aten::instance_norm",
    "aten::rms_norm",  "aten::conv1d",     "aten::conv2d",     "aten::conv3d",     "aten::scaled_dot_product_attention",
    "aten::embedding", "aten::dropout",    "aten::gelu",       "aten::silu",       "aten::relu",
    "aten::softmax"};

uint32_t nameFlags(std::string_view n) {
  uint32_t f = 0;
  if (startsWith(n, "aten::") || startsWith(n, "autograd::") || startsWith(n, "ProfilerStep#") ||
      startsWith(n, "PyTorch Profiler"))
    f |= kPytorch;
  if (has(n, "at::native::") || startsWith(n, "void at::")) f |= kAtenKernel;
  if (xlaKernelName(n)) f |= kXlaKernel;
  if (startsWith(n, "autograd::engine::evaluate_function")) f |= kEvalFn;
  static constexpr std::string_view kGemmOps[] = {"aten::linear",
                                                  "aten::matmul",
                                                  "aten::mm",
                                                  "aten::bmm",
                                                  "aten::addmm",
                                                  "aten::baddbmm",
                                                  "aten::conv1d",
                                                  "aten::conv2d",
                                                  "aten::conv3d",
                                                  "aten::convolution",
                                                  "aten::conv_transpose1d",
                                                  "aten::conv_transpose2d",
                                                  "aten::conv_transpose3d",
                                                  "aten::scaled_dot_product_attention"};
  for (auto g : kGemmOps)
    if (n == g) f |= kGemmOp;
  static constexpr std::string_view kFp32Ops[] = {"aten::layer_norm",
                                                  "aten::group_norm",
                                                  "aten::rms_norm",
                                                  "aten::softmax",
                                                  "aten::log_softmax",
                                                  "aten::cross_entropy_loss",
                                                  "aten::nll_loss",
                                                  "aten::mse_loss",
                                                  "aten::l1_loss",
                                                  "aten::smooth_l1_loss",
                                                  "aten::binary_cross_entropy_with_logits",
                                                  "aten::kl_div",
                                                  "aten::cosine_similarity",
                                                  "aten::norm"};
  for (auto g : kFp32Ops)
    if (n == g) f |= kAutocastFp32;
  if (has(n, "_amp_foreach_non_finite_check_and_unscale") || has(n, "amp_update_scale") ||
      has(n, "_amp_non_finite_check_and_unscale"))
    f |= kScaler;
  if (has(n, "_amp_foreach_non_finite_check_and_unscale_")) f |= kUnscale;
  if (has(n, "DistributedDataParallel") || startsWith(n, "torch.distributed.ddp")) f |= kDdp;
  if (has(n, "FullyShardedDataParallel") || startsWith(n, "FSDP::") || startsWith(n, "FSDP.") ||
      has(n, "torch/distributed/fsdp/") || has(n, "torch/distributed/_composable/fsdp/"))
    f |= kFsdp;
  if (has(n, "deepspeed") || has(n, "DeepSpeed")) f |= kZero;
  if (has(n, "Torch-Compiled Region") || has(n, "CompiledFunction") || startsWith(n, "triton_poi_") ||
      startsWith(n, "triton_red_") || startsWith(n, "triton_per_") || startsWith(n, "triton_tem_") ||
      startsWith(n, "void triton_"))
    f |= kCompile;
  if (has(n, "CheckpointFunction") || has(n, "torch/utils/checkpoint.py")) f |= kCheckpoint;
  if (n == "_NoopSaveInputs") f |= kCheckpointEntry;
  if (startsWith(n, "aten::_fused_")) f |= kFusedOpt;
  if (startsWith(n, "aten::_foreach_")) f |= kForeach;
  if (n == "aten::item" || n == "aten::_local_scalar_dense" || n == "aten::to" || n == "aten::_to_copy" ||
      n == "aten::copy_")
    f |= kSyncChain;
  if (n == "aten::to" || n == "aten::_to_copy") f |= kCast;
  if (n == "aten::item" || n == "aten::_local_scalar_dense" || n == "aten::empty" || n == "aten::to" ||
      n == "aten::_to_copy" || n == "aten::copy_" || n == "aten::lift_fresh" || n == "aten::detach_" ||
      n == "aten::detach" || n == "detach_" || n == "detach" || n == "aten::zeros" || n == "aten::tensor" ||
      n == "aten::empty_strided")
    f |= kOptTrivial;
  // Collective kinds: Kineto's "Collective name" values ("allreduce", "reduce_scatter", short) and
  // NCCL's kernel names (ncclDevKernel_AllGather_RING_LL(...)); other long names are not looked at.
  std::string low;
  if (commKernelLibrary(n) == "nccl" || n.size() < 40) {
    for (char c : n)
      if (c != '_') low += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (has(low, "allreduce")) f |= kAllReduce;
    if (has(low, "allgather")) f |= kAllGather;
    if (has(low, "reducescatter")) f |= kReduceScatter;
  }
  return f;
}

uint8_t forwardEntryOf(std::string_view n) {
  for (size_t i = 0; i < std::size(kForwardEntry); ++i)
    if (n == kForwardEntry[i]) return static_cast<uint8_t>(i + 1);
  return 0;
}

// Precision buckets of tensor-core eligible kernels.
enum Prec : int8_t { kFp32, kTf32, kBf16, kFp16, kFp8, kPrecUnknown, kNotEligible };

Prec ofDtype(std::string_view d) {
  if (has(d, "BFloat16")) return kBf16;
  if (has(d, "Half")) return kFp16;
  if (has(d, "Float8")) return kFp8;
  if (d == "float") return kFp32;
  return kPrecUnknown;
}

Prec ofGemmClass(KernelClass c) {
  switch (c) {
    case KernelClass::kGemmFp32Simt:
      return kFp32;
    case KernelClass::kGemmTf32:
      return kTf32;
    case KernelClass::kGemmBf16:
      return kBf16;
    case KernelClass::kGemmFp16:
      return kFp16;
    case KernelClass::kGemmFp8:
      return kFp8;
    default:
      return kPrecUnknown;
  }
}

// cuBLAS's Hopper kernels name their types in the third field: nvjet_sm90_<A><compute><D>_...
// ("tst": bf16 in and out, fp32 compute; "hsh": fp16). Checked against record_shapes dtypes on H200.
Prec ofNvjet(std::string_view n) {
  if (!startsWith(n, "nvjet_")) return kPrecUnknown;
  size_t a = n.find('_', 6);
  if (a == std::string_view::npos || a + 1 >= n.size()) return kPrecUnknown;
  char t = n[a + 1];
  if (t == 't') return kBf16;
  if (t == 'h') return kFp16;
  return kPrecUnknown;
}

Prec precisionOf(std::string_view name, KernelClass cls, std::string_view dtype) {
  if (cls == KernelClass::kAttentionUnfused) {
    cls = classifyKernel(name, "", dtype);  // its batched GEMMs count; its softmax does not
    if (!isGemm(cls)) return kNotEligible;
  }
  if (isGemm(cls)) {
    Prec p = ofGemmClass(cls);
    if (p == kPrecUnknown) p = ofNvjet(name);
    return p;
  }
  if (cls != KernelClass::kAttentionFused) return kNotEligible;
  std::string low(name);
  std::transform(low.begin(), low.end(), low.begin(), [](unsigned char c) { return std::tolower(c); });
  // cuDNN's fused attention says f16 for bf16 too: only the operator's dtype tells.
  if (!has(low, "cudnn")) {
    if (has(low, "bf16") || has(low, "bfloat16")) return kBf16;
    if (has(low, "_f16") || has(low, "half") || has(low, "fp16")) return kFp16;
    if (isFp32FusedAttentionKernel(name)) return kFp32;
  }
  return ofDtype(dtype);
}

std::string_view precName(int p) {
  static constexpr std::string_view k[] = {"fp32", "tf32", "bf16", "fp16", "fp8"};
  return p >= 0 && p < 5 ? k[p] : std::string_view();
}

// Copy kinds a sync waited for.
enum CopyKind : uint8_t { kNoCopy, kDtoH, kHtoDPageable, kHtoDPinned, kDtoD, kOtherCopy };
std::string_view copyKindName(uint8_t k) {
  switch (k) {
    case kDtoH:
      return "DtoH";
    case kHtoDPageable:
      return "HtoD pageable";
    case kHtoDPinned:
      return "HtoD pinned";
    case kDtoD:
      return "DtoD";
    case kOtherCopy:
      return "copy";
    default:
      return "";
  }
}
uint8_t copyKindOf(std::string_view memcpy_name) {
  switch (copyDirOf(memcpy_name)) {
    case CopyDir::kDtoH:
      return kDtoH;
    case CopyDir::kHtoD:
      return isPageableCopy(memcpy_name) ? kHtoDPageable : kHtoDPinned;
    case CopyDir::kDtoD:
      return kDtoD;
    default:
      return kOtherCopy;
  }
}

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
  size_t cast_window = SIZE_MAX;
  size_t open_site = SIZE_MAX;
  bool node_has_gemm = false;
};

struct SyncAcc {
  int64_t count = 0, host_ns = 0, wait_ns = 0;
};

std::string optimizerNameOf(std::string_view range) {
  // "Optimizer.step#AdamW.step"
  size_t h = range.find('#');
  if (h == std::string_view::npos) return "";
  std::string_view n = range.substr(h + 1);
  if (n.size() > 5 && n.substr(n.size() - 5) == ".step") n.remove_suffix(5);
  return std::string(n);
}

void finishNode(ThreadState& ts, uint32_t track, int64_t& recompute_nodes, int64_t& recompute_gpu_ns,
                CheckpointRegions* regions) {
  BackwardNode& n = ts.node;
  if (n.end != INT64_MIN && n.in_window && (n.named_checkpoint || std::popcount(n.forward_mask) >= 2)) {
    ++recompute_nodes;
    recompute_gpu_ns += n.recompute_gpu_ns;
    if (regions && n.first_forward < n.last_forward_end) {
      regions->recompute.push_back({track, n.first_forward, n.last_forward_end});
      // The node's host time around the re-run forward: the unpack hook that starts it, the
      // recomputation's bookkeeping after it, and the node's own backward (which the edit keeps).
      if (n.begin < n.first_forward) regions->wrapper.push_back({track, n.begin, n.first_forward});
      if (n.last_forward_end < n.end) regions->wrapper.push_back({track, n.last_forward_end, n.end});
    }
  }
  n = BackwardNode{};
  ts.forward_entry_end = INT64_MIN;
}
}  // namespace

JobProfile profileRank(const RankAnalysis& ra, CheckpointRegions* checkpoint, std::vector<CastSite>* casts) {
  JobProfile p;
  const RankTrace& t = *ra.trace;
  const TraceIndex& ix = ra.index;
  const auto& ev = t.events;
  const int steps = static_cast<int>(ra.windows.size());
  p.steps = steps;
  const double per_step = steps > 0 ? 1.0 / steps : 0.0;

  std::vector<uint32_t> flags(t.strings.size());
  std::vector<uint8_t> fwd(t.strings.size());
  uint32_t seen = 0;  // union of the flags of every event name
  for (uint32_t id = 0; id < t.strings.size(); ++id) {
    flags[id] = nameFlags(t.strings.view(id));
    fwd[id] = forwardEntryOf(t.strings.view(id));
  }

  // Threads that run the step ranges: their top-level operators (the forward, the optimizer) end
  // a backward pass. Without step ranges, any thread's do.
  std::vector<uint8_t> step_track(t.tracks.size(), ix.step_annotations.empty() ? 1 : 0);
  for (uint32_t s : ix.step_annotations) step_track[ev[s].track] = 1;

  std::vector<ThreadState> threads(t.tracks.size());
  size_t win = 0;  // host window cursor (events come in start order)
  auto hostBegin = [&](size_t w) { return ra.windows[w].cpu_begin_ns; };
  auto hostEnd = [&](size_t w) { return std::max(ra.windows[w].cpu_end_ns, ra.windows[w].cpu_begin_ns + 1); };

  int64_t backward_passes = 0, optimizer_steps = 0, recompute_nodes = 0, recompute_gpu_ns = 0, forward_gpu_ns = 0;
  int64_t accumulate_grads = 0;  // AccumulateGrad nodes in the steps
  int64_t checkpoint_entries = 0;
  int64_t optimizer_launches = 0, fused_ops = 0, foreach_ops = 0, loop_ops = 0;
  int64_t gemm_ops = 0, autocast_hits = 0, loaders = 0, loaders_in_process = 0, graph_launches = 0,
          graph_launches_all = 0;
  std::vector<CastSite> fwd_casts, bwd_casts;  // CastSite: forward operators, backward nodes (casts set below)
  bool in_burst = false;
  std::map<std::string, int64_t> optimizer_names;
  std::map<std::tuple<std::string, std::string, std::string, std::string>, SyncAcc> syncs;

  auto kernelNs = [&](int64_t corr) -> int64_t {
    uint32_t w = corr >= 0 ? ix.work_of.find(corr) : IdMap::kNone;
    return w != IdMap::kNone && ev[w].kind == EventKind::kKernel ? ev[w].dur_ns : 0;
  };

  for (uint32_t i = 0; i < ev.size(); ++i) {
    const Event& e = ev[i];
    const uint32_t f = flags[e.name];
    seen |= f;
    const Track& tr = t.tracks[e.track];
    if (tr.gpu) continue;  // GPU work is read below, from the index
    while (win < ra.windows.size() && e.start_ns >= hostEnd(win)) ++win;
    const bool in_win = win < ra.windows.size() && e.start_ns >= hostBegin(win);
    ThreadState& ts = threads[e.track];
    while (!ts.ops.empty() && ts.ops.back().end <= e.start_ns) ts.ops.pop_back();
    while (!ts.ranges.empty() && ts.ranges.back().end <= e.start_ns) ts.ranges.pop_back();
    if (ts.forward_entry_end <= e.start_ns) ts.forward_entry_end = INT64_MIN;
    const bool in_node = ts.node.end > e.start_ns;
    const bool in_optimizer = ts.optimizer_end > e.start_ns;

    switch (e.kind) {
      case EventKind::kRange:
        if (e.hasRole(kRoleOptimizerStep)) {
          ts.optimizer_end = e.end_ns();
          ts.scaler_pending = false;
          if (in_win) {
            ++optimizer_steps;
            ++optimizer_names[optimizerNameOf(t.strings.view(e.name))];
          }
        }
        if (e.hasRole(kRoleDataLoading) && in_win) {
          ++loaders;
          if (e.hasRole(kRoleLoaderInProcess)) ++loaders_in_process;
        }
        if (!e.hasRole(kRoleStep)) ts.ranges.push_back({e.end_ns(), i, kNoCopy});
        break;
      case EventKind::kHostOp: {
        const bool top = ts.ops.empty();
        if (f & kEvalFn) {
          if (top) {
            finishNode(ts, e.track, recompute_nodes, recompute_gpu_ns, checkpoint);
            ts.node_has_gemm = false;
            ts.node.begin = e.start_ns;
            ts.node.end = e.end_ns();
            ts.node.in_window = in_win;
            if (!in_burst && in_win) ++backward_passes;
            if (in_win && t.strings.view(e.name).ends_with("AccumulateGrad")) ++accumulate_grads;
            in_burst = true;
          }
        } else if (top && step_track[e.track]) {
          in_burst = false;
        }
        // A non-reentrant checkpoint's entry in forward: its setup (RNG state, hooks) in the host
        // time before it, and the entry itself.
        if ((f & kCheckpointEntry) && in_win && !in_node && checkpoint) {
          ++checkpoint_entries;
          checkpoint->wrapper.push_back(
              {e.track, top && ts.last_top_end != INT64_MIN ? std::max(ts.last_top_end, hostBegin(win)) : e.start_ns,
               e.end_ns()});
        }
        if (top) ts.last_top_end = e.end_ns();
        if (in_node) {
          if (f & kCheckpoint) ts.node.named_checkpoint = true;
          if (fwd[e.name] && ts.forward_entry_end == INT64_MIN) {
            ts.node.forward_mask |= 1u << (fwd[e.name] - 1);
            ts.forward_entry_end = e.end_ns();
            ts.node.first_forward = std::min(ts.node.first_forward, e.start_ns);
            ts.node.last_forward_end = std::max(ts.node.last_forward_end, e.end_ns());
          }
        }
        if (f & kGemmOp) {
          if (!ts.ops.empty() && ev[ts.ops.back().event].name == e.name)
            ++autocast_hits;
          else if (in_win)
            ++gemm_ops;
        }
        if (casts && in_win && !in_optimizer) {
          if (in_node) {
            if ((f & kGemmOp) && !ts.node_has_gemm) {
              ts.node_has_gemm = true;
              bwd_casts.push_back({e.track, ts.node.begin, 0});
            }
          } else {
            if (ts.cast_window != win) ts.cast_window = win, ts.act_fp32 = true;  // a step starts from FP32 data
            if (top) ts.open_site = SIZE_MAX;
            if (top && (f & kGemmOp)) {
              const std::string_view n = t.strings.view(e.name);
              const bool conv = has(n, "conv"), linear = n == "aten::linear";
              const int inputs = n == "aten::scaled_dot_product_attention" ? 3 : (linear || conv) ? 1 : 2;
              const int params = linear || conv ? 1 : 0;  // the bias: when aten::addmm runs under it
              fwd_casts.push_back({e.track, e.start_ns, static_cast<double>(params + (ts.act_fp32 ? inputs : 0))});
              if (linear) ts.open_site = fwd_casts.size() - 1;
              ts.act_fp32 = false;
            } else if (top && (f & kAutocastFp32)) {
              ts.act_fp32 = true;
            } else if (!top && ts.open_site != SIZE_MAX && t.strings.view(e.name) == "aten::addmm") {
              fwd_casts[ts.open_site].casts += 1;
              ts.open_site = SIZE_MAX;
            }
          }
        }
        if (f & kUnscale) ts.scaler_pending = true;
        if (in_optimizer && in_win) {
          if (f & kFusedOpt)
            ++fused_ops;
          else if (f & kForeach)
            ++foreach_ops;
          else if (top && !(f & kOptTrivial))
            ++loop_ops;
        }
        ts.ops.push_back({e.end_ns(), i, kNoCopy});
        break;
      }
      case EventKind::kRuntimeCall:
      case EventKind::kDriverCall: {
        if (e.hasRole(kRoleGraphLaunch)) {
          ++graph_launches_all;
          if (in_win) ++graph_launches;
          break;
        }
        if (e.correlation >= 0) {
          uint32_t w = ix.work_of.find(e.correlation);
          if (w != IdMap::kNone) {
            if (ev[w].kind == EventKind::kMemcpy && !ts.ops.empty())
              ts.ops.back().copy = copyKindOf(t.strings.view(ev[w].name));
            if (in_win && ev[w].kind == EventKind::kKernel) {
              if (in_optimizer)
                ++optimizer_launches;
              else if (in_node) {
                if (ts.forward_entry_end != INT64_MIN) ts.node.recompute_gpu_ns += kernelNs(e.correlation);
              } else if (ev[w].collective == 0) {
                forward_gpu_ns += kernelNs(e.correlation);
              }
            }
          }
        }
        if (e.hasRole(kRoleSyncCall) && in_win) {
          // The synchronizing operator: the innermost one, through its thin wrappers (item ->
          // _local_scalar_dense, to -> _to_copy -> copy_); its caller: the outermost operator
          // around that (backward nodes named by their function), else the innermost range.
          std::string op, caller;
          uint8_t copy = kNoCopy;
          uint32_t op_event = UINT32_MAX;
          if (!ts.ops.empty()) {
            size_t k = ts.ops.size() - 1;
            while (k > 0 && (flags[ev[ts.ops[k - 1].event].name] & kSyncChain) &&
                   (flags[ev[ts.ops[k].event].name] & kSyncChain))
              --k;
            op_event = ts.ops[k].event;
            op = std::string(t.strings.view(ev[op_event].name));
            for (size_t j = k; j < ts.ops.size(); ++j)
              if (ts.ops[j].copy != kNoCopy) copy = ts.ops[j].copy;
            for (size_t j = 0; j < k; ++j) {
              uint32_t n = ev[ts.ops[j].event].name;
              if (flags[n] & kEvalFn) continue;
              caller = std::string(t.strings.view(n));
              break;
            }
          }
          if (caller.empty() && !ts.ranges.empty())
            caller = std::string(t.strings.view(ev[ts.ranges.back().event].name));
          if (caller.empty() && ts.scaler_pending) caller = "GradScaler";
          SyncAcc& a = syncs[{op, std::string(t.strings.view(e.name)), caller, std::string(copyKindName(copy))}];
          a.wait_ns += e.dur_ns;
          if (op_event == UINT32_MAX) {
            ++a.count;
            a.host_ns += e.dur_ns;
          } else if (ts.last_sync_op != op_event) {
            ++a.count;
            a.host_ns += ev[op_event].dur_ns;
            ts.last_sync_op = op_event;
          }
        }
        break;
      }
      default:
        break;
    }
  }
  for (uint32_t tr = 0; tr < threads.size(); ++tr)
    finishNode(threads[tr], tr, recompute_nodes, recompute_gpu_ns, checkpoint);
  if (checkpoint) {
    auto byStart = [](const HostRegion& a, const HostRegion& b) {
      return a.begin_ns != b.begin_ns ? a.begin_ns < b.begin_ns : a.track < b.track;
    };
    std::sort(checkpoint->recompute.begin(), checkpoint->recompute.end(), byStart);
    // The wrapper's host cost was measured for the non-reentrant implementation only: without its
    // entries in forward, no wrapper regions.
    if (checkpoint_entries == 0) checkpoint->wrapper.clear();
    std::sort(checkpoint->wrapper.begin(), checkpoint->wrapper.end(), byStart);
  }
  if (casts) {  // none where autocast already runs (its operators re-dispatched under their own name)
    casts->clear();
    double total = 0;
    for (const CastSite& c : fwd_casts) total += c.casts;
    if (autocast_hits == 0 && total > 0) {
      for (CastSite& c : bwd_casts) c.casts = total / static_cast<double>(bwd_casts.size());
      casts->reserve(fwd_casts.size() + bwd_casts.size());
      for (const auto* v : {&fwd_casts, &bwd_casts})
        for (const CastSite& c : *v)
          if (c.casts > 0) casts->push_back(c);
      std::sort(casts->begin(), casts->end(), [](const CastSite& a, const CastSite& b) { return a.at_ns < b.at_ns; });
    }
  }

  // GPU side: precision of the eligible kernels, inside the windows.
  int64_t prec_ns[kNotEligible] = {};
  int64_t eligible_ns = 0;
  std::map<std::pair<uint32_t, uint32_t>, Prec> prec_cache;
  size_t gw = 0;
  for (uint32_t i : ix.gpu_work) {
    const Event& e = ev[i];
    if (e.kind != EventKind::kKernel) continue;
    while (gw < ra.windows.size() && e.start_ns >= ra.windows[gw].end_ns) ++gw;
    if (gw >= ra.windows.size() || e.start_ns < ra.windows[gw].begin_ns) continue;
    KernelClass c = ix.class_of_event[i];
    if (!isGemm(c) && c != KernelClass::kAttentionFused && c != KernelClass::kAttentionUnfused) continue;
    uint32_t op_ev = e.external_id >= 0 ? ix.op_of.find(e.external_id) : IdMap::kNone;
    uint32_t dtype = op_ev == IdMap::kNone ? 0 : ev[op_ev].dtype;
    auto key = std::make_pair(e.name, dtype);
    auto it = prec_cache.find(key);
    if (it == prec_cache.end())
      it = prec_cache.emplace(key, precisionOf(t.strings.view(e.name), c, t.strings.view(dtype))).first;
    if (it->second == kNotEligible) continue;
    prec_ns[it->second] += e.dur_ns;
    eligible_ns += e.dur_ns;
  }

  // Framework.
  if (seen & kPytorch) {
    p.framework = "pytorch";
    p.notes.push_back("framework version: not in the trace (Kineto records schemaVersion and CUDA versions only)");
  } else if (seen & (kAtenKernel | kXlaKernel)) {
    // A recording (gpudoctor record) has no framework operators: the kernels' names tell.
    p.framework = (seen & kAtenKernel) ? "pytorch" : "jax";
    p.notes.push_back(std::string("framework: from its kernels' names (") +
                      ((seen & kAtenKernel) ? "PyTorch's ATen kernels" : "XLA fusion kernels") +
                      "; no framework operators were recorded), version unknown");
  }
  if (!(seen & kPytorch)) {
    p.not_in_source = {"optimizer", "dataloader", "autocast", "grad_accumulation", "activation_checkpointing"};
    p.notes.push_back(
        "not in this source: the optimizer, the DataLoader, autocast, gradient accumulation and "
        "recomputation are read from framework operators, which a recording (gpudoctor record) or a "
        "GPU-only profile does not hold; a torch.profiler trace with CPU activities does");
  }

  // Precision.
  PrecisionShares& s = p.precision_shares;
  s.eligible_ns = steps ? eligible_ns / steps : eligible_ns;
  if (eligible_ns > 0) {
    double tot = static_cast<double>(eligible_ns);
    s.fp32 = prec_ns[kFp32] / tot;
    s.tf32 = prec_ns[kTf32] / tot;
    s.bf16 = prec_ns[kBf16] / tot;
    s.fp16 = prec_ns[kFp16] / tot;
    s.fp8 = prec_ns[kFp8] / tot;
    s.unknown = prec_ns[kPrecUnknown] / tot;
    int64_t known = eligible_ns - prec_ns[kPrecUnknown];
    if (2 * known < eligible_ns) {
      p.notes.push_back(
          "precision: most GEMM/attention kernel time is of unknown precision (names silent, no record_shapes)");
    } else {
      int best = 0;
      for (int k = 1; k < kPrecUnknown; ++k)
        if (prec_ns[k] > prec_ns[best]) best = k;
      p.precision = 10 * prec_ns[best] >= 9 * known ? std::string(precName(best)) : "mixed";
    }
  } else {
    p.notes.push_back("precision: no GEMM, convolution or attention kernels in the steps");
  }
  if (autocast_hits > 0)
    p.autocast = true;
  else if (gemm_ops > 0)
    p.autocast = false;

  p.grad_scaler = (seen & kScaler) != 0;

  // Accumulation.
  p.backward_passes_per_step = backward_passes * per_step;
  if (backward_passes > 0)
    p.param_tensors = static_cast<double>(accumulate_grads) / static_cast<double>(backward_passes);
  p.optimizer_steps_per_step = optimizer_steps * per_step;
  if (backward_passes > 0 && optimizer_steps > 0) {
    if (backward_passes % optimizer_steps == 0)
      p.grad_accumulation_steps = static_cast<int>(backward_passes / optimizer_steps);
    else
      p.notes.push_back("gradient accumulation: " + std::to_string(backward_passes) + " backward passes over " +
                        std::to_string(optimizer_steps) + " optimizer steps");
  } else if (graph_launches > 0) {
    p.notes.push_back(
        "gradient accumulation, optimizer, recomputation: the step runs inside CUDA graphs, "
        "whose operators the trace does not show");
  } else if (backward_passes == 0) {
    p.notes.push_back("gradient accumulation: no backward pass (autograd nodes) in the steps");
  } else {
    p.notes.push_back("gradient accumulation: no Optimizer.step range in the steps");
  }

  // Data parallelism.
  uint32_t coll = 0;
  for (uint32_t i : ix.gpu_work) {
    const Event& e = ev[i];
    if (e.kind != EventKind::kKernel || !e.hasRole(kRoleCollective)) continue;
    uint32_t cf = 0;
    if (e.collective != 0 && e.collective <= t.collectives.size()) {
      const Collective& c = t.collectives[e.collective - 1];
      if (c.group_size == 1) continue;
      cf = flags[c.coll_name];
    }
    if (!(cf & (kAllReduce | kAllGather | kReduceScatter))) cf = flags[e.name];
    coll |= cf;
  }
  if (t.world_size > 0) p.ranks = t.world_size;
  if (seen & kFsdp) {
    p.data_parallel = "fsdp";
    p.data_parallel_basis = "FullyShardedDataParallel / FSDP:: names";
  } else if (seen & kZero) {
    p.data_parallel = "zero";
    p.data_parallel_basis = "DeepSpeed names";
  } else if (seen & kDdp) {
    p.data_parallel = "ddp";
    p.data_parallel_basis = "DistributedDataParallel names";
  } else if ((coll & kAllGather) && (coll & kReduceScatter)) {
    p.data_parallel = "fsdp";
    p.data_parallel_basis = "all-gather + reduce-scatter collectives (FSDP or ZeRO-3 pattern)";
  } else if (coll & kAllReduce) {
    p.data_parallel = "ddp";
    p.data_parallel_basis = "all-reduce collectives";
  } else if (coll == 0 && !(seen & (kAllReduce | kAllGather | kReduceScatter)) && t.world_size <= 1) {
    // Kineto writes distributedInfo whenever a process group exists: without it, one process.
    p.data_parallel = "none";
    p.data_parallel_basis = t.world_size == 1 ? "world size 1" : "no process group (distributedInfo), no collectives";
    p.ranks = 1;
  } else {
    p.notes.push_back("data parallelism: world size " + std::to_string(t.world_size) +
                      " but no gradient collectives in the steps");
  }

  p.torch_compile = (seen & kCompile) != 0;
  p.cuda_graphs = graph_launches_all > 0;

  // Recomputation.
  if (backward_passes > 0) {
    p.activation_checkpointing = recompute_nodes > 0 || (seen & kCheckpoint);
    if (*p.activation_checkpointing && forward_gpu_ns > 0 && recompute_nodes > 0)
      p.recompute_share = static_cast<double>(recompute_gpu_ns) / static_cast<double>(forward_gpu_ns);
    else if (!*p.activation_checkpointing)
      p.recompute_share = 0.0;
  } else if (seen & kCheckpoint) {
    p.activation_checkpointing = true;
  }

  // Optimizer.
  if (!optimizer_names.empty()) {
    auto best = std::max_element(optimizer_names.begin(), optimizer_names.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
    p.optimizer = best->first;
    if (optimizer_names.size() > 1) {
      std::string others;
      for (const auto& [n, c] : optimizer_names)
        if (n != p.optimizer) others += (others.empty() ? "" : ", ") + n;
      p.notes.push_back("optimizer: also " + others);
    }
    if (fused_ops > 0)
      p.optimizer_impl = "fused";
    else if (foreach_ops > 0)
      p.optimizer_impl = "foreach";
    else if (loop_ops > 0)
      p.optimizer_impl = "loop";
    p.optimizer_launches_per_step = optimizer_launches * per_step;
  }

  // Loader and input copies.
  p.dataloader = loaders > 0;
  if (loaders > 0) {
    p.loader_multiprocess = loaders_in_process < loaders;
    if (loaders_in_process == loaders)
      p.loader_workers = 0;
    else
      p.notes.push_back("DataLoader workers: more than 0, the number is not in the trace");
  }
  const auto& tot = ra.total;
  int64_t htod = tot.pinned_htod.bytes + tot.pageable_htod.bytes;
  if (htod > 0) p.pin_memory = tot.pinned_htod.bytes >= tot.pageable_htod.bytes;

  // Host syncs.
  for (const auto& [k, a] : syncs) {
    HostSync h;
    std::tie(h.op, h.call, h.caller, h.copy) = k;
    h.count_per_step = a.count * per_step;
    h.host_ns_per_step = static_cast<double>(a.host_ns) * per_step;
    h.wait_ns_per_step = static_cast<double>(a.wait_ns) * per_step;
    p.host_syncs.push_back(std::move(h));
  }
  std::stable_sort(p.host_syncs.begin(), p.host_syncs.end(),
                   [](const HostSync& a, const HostSync& b) { return a.host_ns_per_step > b.host_ns_per_step; });
  return p;
}

namespace {
// The value most ranks give (the first rank's on a tie), and a note for each rank that differs.
template <class T, class Show>
T consensus(const std::vector<JobProfile>& ps, const std::vector<int>& ids, T JobProfile::*field, const char* what,
            Show show, std::vector<std::string>& notes) {
  std::vector<std::pair<T, int>> counts;
  for (const auto& p : ps) {
    auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == p.*field; });
    if (it == counts.end())
      counts.push_back({p.*field, 1});
    else
      ++it->second;
  }
  auto best =
      std::max_element(counts.begin(), counts.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  T v = best->first;
  if (counts.size() > 1) {
    std::string diff;
    int shown = 0;
    for (size_t r = 0; r < ps.size(); ++r)
      if (!(ps[r].*field == v) && shown++ < 8)
        diff += (diff.empty() ? "" : ", ") + std::string("rank ") + std::to_string(ids[r]) + " " + show(ps[r].*field);
    if (shown > 8) diff += ", ...";
    notes.push_back("ranks differ: " + std::string(what) + ": " + show(v) + " on most ranks; " + diff);
  }
  return v;
}

std::string showStr(const std::string& s) { return s.empty() ? "unknown" : s; }
std::string showBool(bool b) { return b ? "yes" : "no"; }
std::string showOptBool(const std::optional<bool>& b) { return b ? showBool(*b) : "unknown"; }
std::string showOptInt(const std::optional<int>& v) { return v ? std::to_string(*v) : "unknown"; }
}  // namespace

std::vector<std::pair<std::string, std::string>> jobFields(const JobProfile& p) {
  std::string loader = !p.dataloader            ? "no DataLoader"
                       : !p.loader_multiprocess ? "unknown"
                       : *p.loader_multiprocess ? "workers"
                                                : "0 (in process)";
  std::vector<std::pair<std::string, std::string>> f = {
      {"precision", showStr(p.precision)},
      {"grad_scaler", showBool(p.grad_scaler)},
      {"grad_accumulation_steps", showOptInt(p.grad_accumulation_steps)},
      {"data_parallel", showStr(p.data_parallel)},
      {"torch_compile", showBool(p.torch_compile)},
      {"cuda_graphs", showBool(p.cuda_graphs)},
      {"activation_checkpointing", showOptBool(p.activation_checkpointing)},
      {"optimizer", showStr(p.optimizer) + " " + showStr(p.optimizer_impl)},
      {"dataloader_workers", loader},
      {"pin_memory", showOptBool(p.pin_memory)}};
  std::string syncs;
  for (const auto& h : p.host_syncs)
    syncs +=
        (syncs.empty() ? "" : ", ") + (h.op.empty() ? h.call : h.op) + fmt::format(" {:.3g}/step", h.count_per_step);
  f.push_back({"host_syncs", syncs.empty() ? "none" : syncs});
  return f;
}

JobProfile mergeJobProfiles(const std::vector<JobProfile>& ps, const std::vector<int>& ids) {
  if (ps.empty()) return {};
  if (ps.size() == 1) return ps.front();
  JobProfile j;
  auto& n = j.notes;
  j.framework = consensus(ps, ids, &JobProfile::framework, "framework", showStr, n);
  j.framework_version = consensus(ps, ids, &JobProfile::framework_version, "framework version", showStr, n);
  j.precision = consensus(ps, ids, &JobProfile::precision, "precision", showStr, n);
  j.autocast = consensus(ps, ids, &JobProfile::autocast, "autocast", showOptBool, n);
  j.grad_scaler = consensus(ps, ids, &JobProfile::grad_scaler, "grad scaler", showBool, n);
  j.grad_accumulation_steps =
      consensus(ps, ids, &JobProfile::grad_accumulation_steps, "gradient accumulation", showOptInt, n);
  j.data_parallel = consensus(ps, ids, &JobProfile::data_parallel, "data parallelism", showStr, n);
  j.torch_compile = consensus(ps, ids, &JobProfile::torch_compile, "torch.compile", showBool, n);
  j.cuda_graphs = consensus(ps, ids, &JobProfile::cuda_graphs, "CUDA graphs", showBool, n);
  j.activation_checkpointing =
      consensus(ps, ids, &JobProfile::activation_checkpointing, "activation checkpointing", showOptBool, n);
  j.optimizer = consensus(ps, ids, &JobProfile::optimizer, "optimizer", showStr, n);
  j.optimizer_impl = consensus(ps, ids, &JobProfile::optimizer_impl, "optimizer implementation", showStr, n);
  j.dataloader = consensus(ps, ids, &JobProfile::dataloader, "DataLoader", showBool, n);
  j.loader_workers = consensus(ps, ids, &JobProfile::loader_workers, "DataLoader workers", showOptInt, n);
  j.loader_multiprocess =
      consensus(ps, ids, &JobProfile::loader_multiprocess, "DataLoader worker processes", showOptBool, n);
  j.pin_memory = consensus(ps, ids, &JobProfile::pin_memory, "pinned host-to-device copies", showOptBool, n);
  for (const auto& p : ps)  // what any rank's source cannot hold, once each
    for (const auto& f : p.not_in_source)
      if (std::find(j.not_in_source.begin(), j.not_in_source.end(), f) == j.not_in_source.end())
        j.not_in_source.push_back(f);
  // Basis of the data parallelism: the first rank that has the consensus value.
  for (const auto& p : ps)
    if (p.data_parallel == j.data_parallel) {
      j.data_parallel_basis = p.data_parallel_basis;
      break;
    }
  // Per-rank notes (what could not be told) once each, in first-seen order.
  for (const auto& p : ps)
    for (const auto& x : p.notes)
      if (std::find(n.begin(), n.end(), x) == n.end()) n.push_back(x);
  // World size: the largest recorded, at least the ranks given.
  int world = static_cast<int>(ps.size());
  for (const auto& p : ps)
    if (p.ranks) world = std::max(world, *p.ranks);
  j.ranks = world;
  if (j.data_parallel.empty() && world > 1 &&
      std::none_of(ps.begin(), ps.end(), [](const auto& p) { return !p.data_parallel.empty(); }))
    n.push_back("data parallelism: " + std::to_string(world) + " ranks, no gradient collectives seen");
  // Per-step figures: means over ranks.
  const double k = 1.0 / static_cast<double>(ps.size());
  std::vector<double> shares;
  for (const auto& p : ps) {
    j.steps += p.steps;
    j.backward_passes_per_step += p.backward_passes_per_step * k;
    j.optimizer_steps_per_step += p.optimizer_steps_per_step * k;
    j.optimizer_launches_per_step += p.optimizer_launches_per_step * k;
    j.param_tensors += p.param_tensors * k;
    auto& s = j.precision_shares;
    const auto& q = p.precision_shares;
    s.fp32 += q.fp32 * k, s.tf32 += q.tf32 * k, s.bf16 += q.bf16 * k, s.fp16 += q.fp16 * k, s.fp8 += q.fp8 * k;
    s.unknown += q.unknown * k;
    s.eligible_ns += static_cast<int64_t>(std::llround(static_cast<double>(q.eligible_ns) * k));
    if (p.recompute_share) shares.push_back(*p.recompute_share);
    for (const auto& h : p.host_syncs) {
      auto it = std::find_if(j.host_syncs.begin(), j.host_syncs.end(), [&](const HostSync& x) {
        return x.op == h.op && x.call == h.call && x.caller == h.caller && x.copy == h.copy;
      });
      if (it == j.host_syncs.end()) {
        j.host_syncs.push_back(h);
        it = j.host_syncs.end() - 1;
        it->count_per_step = it->host_ns_per_step = it->wait_ns_per_step = 0;
      }
      it->count_per_step += h.count_per_step * k;
      it->host_ns_per_step += h.host_ns_per_step * k;
      it->wait_ns_per_step += h.wait_ns_per_step * k;
    }
  }
  // A sync that costs one rank much more host time than another (a rank waiting for the others).
  for (const auto& h : j.host_syncs) {
    double lo = 1e300, hi = -1;
    size_t lo_r = 0, hi_r = 0;
    for (size_t r = 0; r < ps.size(); ++r) {
      double v = 0;
      for (const auto& x : ps[r].host_syncs)
        if (x.op == h.op && x.call == h.call && x.caller == h.caller && x.copy == h.copy) v = x.host_ns_per_step;
      if (v < lo) lo = v, lo_r = r;
      if (v > hi) hi = v, hi_r = r;
    }
    if (hi - lo > 1e6 && hi > 2 * lo) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "%.2f ms/step on rank %d, %.2f ms/step on rank %d", hi / 1e6, ids[hi_r], lo / 1e6,
                    ids[lo_r]);
      n.push_back("ranks differ: host sync " + (h.op.empty() ? h.call : h.op) +
                  (h.caller.empty() ? "" : " in " + h.caller) + ": " + buf);
    }
  }
  if (!shares.empty()) {
    double sum = 0;
    for (double x : shares) sum += x;
    j.recompute_share = sum / static_cast<double>(shares.size());
  }
  std::stable_sort(j.host_syncs.begin(), j.host_syncs.end(),
                   [](const HostSync& a, const HostSync& b) { return a.host_ns_per_step > b.host_ns_per_step; });
  return j;
}

JobProfile profileJob(const RunAnalysis& run) {
  std::vector<JobProfile> ps;
  std::vector<int> ids;
  for (const auto& r : run.ranks) {
    ps.push_back(profileRank(r));
    ids.push_back(r.trace->rank);
  }
  return mergeJobProfiles(ps, ids);
}

}  // namespace gpudoctor
