// The job profile: what the training job already does, read from its trace alone (precision,
// grad scaler, accumulation, data parallelism, compile, CUDA graphs, recomputation, optimizer
// implementation, loader, host syncs), so that judgements never advise what is already in use.
// A field the trace may be silent about has an unknown state (empty string, nullopt); the plain
// bools are features whose presence the trace always shows (their names or calls), so false is seen.
#pragma once
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpudoctor {

struct RankAnalysis;
struct RunAnalysis;

// One synchronizing operator: the host waited for the GPU inside it (a blocking runtime call ran
// under it). Operators that merely look like syncs (AdamW's CPU step counters call aten::item
// without any GPU copy) are not listed.
struct HostSync {
  std::string op;      // the synchronizing operator ("aten::item", "aten::nonzero", "aten::to"); empty: no operator
  std::string call;    // the blocking runtime call under it ("cudaStreamSynchronize", "cudaDeviceSynchronize", ...)
  std::string caller;  // who called op: the enclosing operator or range, "GradScaler"; empty: the step itself
  std::string copy;    // the copy it waited for: "DtoH", "HtoD pageable", ...; empty: none
  double count_per_step = 0;    // operator instances that synced, per step
  double host_ns_per_step = 0;  // host time in those operators (the call's time where there is no operator)
  double wait_ns_per_step = 0;  // of which inside the blocking calls
};

// Share of tensor-core eligible kernel time (GEMM, convolution, attention) by precision.
struct PrecisionShares {
  double fp32 = 0, tf32 = 0, bf16 = 0, fp16 = 0, fp8 = 0;
  double unknown = 0;       // eligible kernels whose precision neither name nor operator tells
  int64_t eligible_ns = 0;  // summed duration of the eligible kernels, per step
};

struct JobProfile {
  std::string framework;          // "pytorch"; empty: unknown
  std::string framework_version;  // empty: the trace records none (Kineto writes no framework version)
  // Precision of the tensor-core eligible work: "fp32", "tf32", "bf16", "fp16", "fp8" (one covers
  // >= 90 % of the known time) or "mixed"; empty: unknown (no such work, or mostly of unknown precision).
  std::string precision;
  PrecisionShares precision_shares;
  std::optional<bool>
      autocast;              // GEMM operators re-dispatched under torch.autocast; nullopt: no eager GEMM operator seen
  bool grad_scaler = false;  // GradScaler's unscale / update-scale operators or kernels ran
  bool group_norm = false;   // GroupNorm ran: it has no NHWC kernels, so channels_last tensors are copied around it
  // Backward passes per optimizer step (forward/backward micro-batches); nullopt: no backward pass
  // or no optimizer step visible (e.g. both inside a CUDA graph), or not a whole multiple.
  std::optional<int> grad_accumulation_steps;
  double backward_passes_per_step = 0;
  double optimizer_steps_per_step = 0;
  // Data parallelism: "ddp", "fsdp", "zero", "none"; empty: unknown. data_parallel_basis says from what.
  std::string data_parallel;
  std::string data_parallel_basis;
  std::optional<int> ranks;    // world size
  bool torch_compile = false;  // compiled regions / inductor (triton_*) kernels
  bool cuda_graphs = false;    // CUDA graph launches, or a graph capture
  // Where this trace stands with CUDA graphs: "capture" (cudaStreamBeginCapture / cudaGraphInstantiate
  // recorded: a one-off capture, whose launches are not the loop it serves), "replay" (graph
  // launches only); empty: no graphs.
  std::string graph_phase;
  // "training" (a backward pass, an optimizer step, a grad scaler, or backward operators/kernels),
  // "inference" (framework operators recorded and none of those); empty: unknown (no operators).
  std::string mode;
  // Recomputation in backward (activation checkpointing); nullopt: no backward pass visible.
  std::optional<bool> activation_checkpointing;
  // GPU time of the forward work recomputed inside backward ÷ that of the forward (and other
  // non-backward, non-optimizer) work; nullopt: unknown.
  std::optional<double> recompute_share;
  std::string optimizer;                   // "AdamW" (from Optimizer.step#AdamW.step); empty: unknown
  std::string optimizer_impl;              // "fused", "foreach", "loop"; empty: unknown
  double optimizer_launches_per_step = 0;  // kernel launches inside the optimizer step
  // Parameter tensors that receive gradients: AccumulateGrad backward nodes per backward pass
  // (mean over ranks); 0: no backward pass seen.
  double param_tensors = 0;
  // torch.nn.functional.scaled_dot_product_attention calls per step, and of those the calls that ran
  // its math backend (aten::_scaled_dot_product_attention_math: the score matrix materialized, as by
  // hand-written attention), because no fused backend took the call's inputs.
  double sdpa_calls_per_step = 0, sdpa_math_calls_per_step = 0;
  bool dataloader = false;                  // DataLoader fetches were recorded
  std::optional<int> loader_workers;        // 0 (in-process loading); nullopt: workers of unknown number, or no loader
  std::optional<bool> loader_multiprocess;  // fetches from worker processes; nullopt: no loader
  // Host-to-device copies from pinned memory (by bytes); nullopt: no host-to-device copies.
  std::optional<bool> pin_memory;
  std::vector<HostSync> host_syncs;  // by host time per step, largest first
  int steps = 0;                     // steps the per-step figures are over (all ranks)
  std::vector<std::string> notes;    // what could not be told, and how ranks differ ("ranks differ: ...")
  // Fields this source cannot hold: a trace without framework operators (a `gpudoctor record`
  // recording, a GPU-only profile) has no optimizer, DataLoader, autocast, accumulation or
  // recomputation to read ("optimizer", "dataloader", "autocast", "grad_accumulation",
  // "activation_checkpointing"); empty for a profiler trace with its operators.
  std::vector<std::string> not_in_source;
  bool notInSource(std::string_view field) const {
    return std::find(not_in_source.begin(), not_in_source.end(), field) != not_in_source.end();
  }
};

// A host time range on one thread (index into RankTrace::tracks).
struct HostRegion {
  uint32_t track = 0;
  int64_t begin_ns = 0, end_ns = 0;
};

// Where activation checkpointing spends host time, in the selected steps (each list in start order).
struct CheckpointRegions {
  // Per recomputing backward node: the host span from the first start to the last end of the
  // forward operators it re-runs (the Python between them included): what the re-run costs.
  std::vector<HostRegion> recompute;
  // Where the checkpoint wrapper's own host work runs, for the non-reentrant implementation (empty
  // otherwise): each recomputing node's host time outside its re-run span, and each checkpoint
  // entry in forward (_NoopSaveInputs) with the host time before it since the last operator.
  std::vector<HostRegion> wrapper;
  // Checkpointed blocks: the recomputing nodes.
  int64_t blocks() const { return static_cast<int64_t>(recompute.size()); }
};

// Where torch.autocast would add casts to a job whose matrix work runs without it (FP32/TF32), in
// the selected steps: the host work that turning bf16 autocast on adds. Each forward operator that
// autocast re-dispatches in lower precision (linear, matmul, bmm, convolution, attention) casts its
// parameters (a linear's weight and, with bias, its bias; a convolution's weight) and, where its
// input is FP32, its activation inputs: the activations stay BF16 from such an operator's output
// until an operator on autocast's FP32 list (normalization, softmax, losses) makes them FP32 again
// (an elementwise mix of BF16 and FP32, a residual add, is not seen: read as BF16). An explicit cast
// that does nothing in FP32 (`.float()`: aten::to with no copy under it) casts a BF16 activation and
// makes it FP32. Each cast of a
// tensor that needs a gradient has its own backward node, a cast back: the backward casts are as
// many as the forward ones, spread over the backward nodes that run matrix work. Empty where the
// trace shows autocast already in use, or no such operators.
struct CastSite {
  uint32_t track = 0;
  int64_t at_ns = 0;  // the operator's (or backward node's) start
  double casts = 0;
};

// The profile of one analyzed rank (its index and step windows must be built). `checkpoint`, when
// given, receives where activation checkpointing spends host time: what removing it removes;
// `casts`, where autocast would cast (sorted by time).
JobProfile profileRank(const RankAnalysis& rank, CheckpointRegions* checkpoint = nullptr,
                       std::vector<CastSite>* casts = nullptr);
// The fields that a change of the job shows in, as (key, value) text ("unknown" where the trace
// cannot tell): what `compare` diffs, and what analyze --json keeps of them (job_summary).
std::vector<std::pair<std::string, std::string>> jobFields(const JobProfile& job);

// One profile for the job from per-rank profiles (in rank order; ids name them in the notes):
// the value most ranks show, with every difference noted; per-step figures averaged over ranks.
JobProfile mergeJobProfiles(const std::vector<JobProfile>& ranks, const std::vector<int>& ids);
// The profile of a whole run.
JobProfile profileJob(const RunAnalysis& run);

}  // namespace gpudoctor
