// What the rules judge: one value built once from the analysis results and the optional inputs
// (NCCL settings and logs). Plain numbers and flags, so a rule's unit test writes one by hand and
// needs no trace. Per-step figures are means over every selected step of every rank.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/kernel_class.h"
#include "analysis/run_analysis.h"
#include "diagnosis/finding.h"
#include "diagnosis/nccl_env_check.h"

namespace gpudoctor {

// Per-step means, in ns (counts for the copy counts).
struct StepMeans {
  double wall = 0, busy = 0, compute = 0, comm = 0, comm_exposed = 0, copies = 0, idle = 0;
  double idle_host = 0, idle_sync = 0, idle_dependency = 0, idle_other = 0, idle_loader = 0;
  double idle_host_loader = 0, idle_sync_loader = 0;  // the loader's share of host / sync idle
  double loader = 0, optimizer = 0, sync = 0;
  double pageable_htod_ns = 0, pageable_htod_count = 0, pageable_htod_bytes = 0, pinned_htod_count = 0;
};

// One bottleneck category and its share of the step.
struct BottleneckShare {
  std::string category;  // compute, communication, host_launch, input, sync, copies, other_idle
  double share = 0;
  double ms_per_step = 0;
};

struct StragglerFacts {
  bool matched = false;       // the ranks' collectives could be matched
  int rank = -1;              // the straggler the analysis found, or -1
  double share_last = 0;      // share of collectives it reached last (or, per process group, of steps it led)
  double others_wait_ns = 0;  // per step, the other ranks' mean wait for it
  double idle_host_ns = 0;    // per step, on the straggler: GPU idle waiting for launches
  double loader_ns = 0;       // per step, on the straggler: DataLoader time
  std::string note;           // the analysis's sentence
  std::string share_of = "collectives";  // what share_last is a share of ("steps": judged per process group)
};

struct CollectiveSize {
  int64_t bytes = 0;       // message bytes (0: unknown)
  int64_t count = 0;       // calls over all selected steps and ranks
  std::string collective;  // "allreduce", "allgather", "reduce_scatter", ... (as the trace names it)
  double total_ns = 0;     // kernel time over all selected steps and ranks
  std::string dtype;       // "BFloat16", ...
};

// Per-expert MoE dispatch (analysis/moe_dispatch.h), per step: means over every selected step of
// every rank.
struct MoeFacts {
  double layers = 0;       // forward per-expert loops
  int experts = 0;         // experts per loop (the most common count)
  int ops_per_expert = 0;  // top-level operators per expert in forward (of the most common loop)
  double syncs = 0;        // synchronizing calls in them
  double sync_ns = 0;      // the host's time blocked in those calls
  double host_ns = 0;      // host time inside the loops, forward and backward
  bool found() const { return layers > 0; }
};

// Embedding tables with dense gradients (analysis/embedding_grads.h), per step: means over every
// selected step of every rank.
struct EmbeddingFacts {
  double dense_tables = 0;  // dense embedding backward operators
  double fill_ns = 0;       // the zero fills of their table-sized gradients (GPU)
  double backward_ns = 0;   // all GPU work under those operators
  bool sparse_in_use = false;
};

struct RankMemory {
  int rank = -1;
  int64_t peak_bytes = 0;    // largest allocated total (profile_memory=True)
  int64_t device_bytes = 0;  // the device's memory
};

struct Facts {
  double steps = 1;  // selected steps summed over ranks (at least 1)
  int ranks = 1;
  StepMeans mean;
  std::vector<BottleneckShare> ranking;  // every category, largest share first
  std::vector<BottleneckShare> groups;   // the ranking grouped (groupOf), largest first
  // Kernels over every selected step of every rank (ns, not per step).
  std::array<double, kKernelClassCount> class_ns{};
  double kernel_ns = 0;
  int64_t compute_kernels = 0;        // every kernel but NCCL's
  int64_t compute_kernel_p50_ns = 0;  // their median duration
  bool fused_optimizer = false;       // an optimizer kernel of a fused implementation ran
  size_t collective_groups = 0;
  std::vector<CollectiveSize> collectives;
  int compute_major = -1;          // the first rank's GPU generation; -1 unknown
  std::string compute_major_note;  // where it came from when the trace's deviceProperties do not say
  int64_t device_bytes = 0;        // the first rank's GPU memory (0: unknown)
  bool loader_in_process = false;  // DataLoader iterated in the training process (num_workers=0)
  double host_own_work = 0;        // the host's own work per step (analysis/host_work.h), mean over ranks
  MoeFacts moe;                    // per-expert MoE dispatch loops
  EmbeddingFacts embedding;        // embedding tables' dense gradients
  StragglerFacts straggler;
  std::vector<RankMemory> memory;  // ranks with memory events and a known device size
  // Profiler options seen; profile_memory: some rank recorded memory events.
  bool record_shapes = false, with_stack = false, profile_memory = false;
  bool has_nccl_env = false;         // settings were given
  std::vector<EnvFinding> nccl_env;  // `nccl env`'s verdict per setting
  bool has_nccl_log = false;         // logs were given
  std::vector<Finding> nccl_log;     // what the logs reveal
  JobProfile job;                    // what the job already does (analysis/job_profile)
  // The convolution libraries' NCHW <-> NHWC layout transposes (isLayoutTransposeKernel) in the selected steps,
  // summed over ranks (ns, not per step): convolutions run NHWC, the tensors are NCHW.
  double layout_transpose_ns = 0;
  // cuDNN's other tensor transforms (isCudnnTensorTransformKernel), summed so: channels_last keeps them,
  // bf16 halves their bytes as the transposes'.
  double tensor_transform_ns = 0;
  // Batch norms in their NCHW kernels (isNchwBatchNormKernelName) in the selected steps, summed over ranks
  // (ns): what channels_last moves to the NHWC kernels besides the transposes.
  double nchw_batch_norm_ns = 0;
  // Convolution kernels (isConvolutionKernelName) in the selected steps, summed over ranks (ns): channels_last
  // changes them too (NCHW-only grouped and SIMT kernels give way to NHWC tensor-core ones).
  double convolution_ns = 0;
  // Tensor-core GEMMs on operands aligned to less than 16 bytes (kernel_class.h: a dimension not a
  // multiple of 8, or 4 in TF32), of a GEMM class (a materialized attention's batched GEMMs are not),
  // in the selected steps, summed over ranks (ns by operand alignment, misalignedGemmIndex: 2, 4, 8
  // bytes; and kernels).
  std::array<double, 3> misaligned_gemm_ns{};
  int64_t misaligned_gemms = 0;

  // Share of the mean step.
  double share(double ns) const { return mean.wall > 0 ? ns / mean.wall : 0; }
  // A total over all steps as a per-step mean.
  double perStep(double total_ns) const { return total_ns / steps; }
  // Total kernel time of one class (over all steps).
  double classNs(KernelClass c) const { return class_ns[static_cast<size_t>(c)]; }
  // Total GEMM kernel time (every precision).
  double gemmNs() const;
};

// Other evidence a diagnosis can use when the user provides it.
struct DiagnosisInputs {
  const std::vector<EnvFinding>* nccl_env = nullptr;  // `nccl env` verdicts on the job's settings
  const std::vector<Finding>* nccl_log = nullptr;     // what the job's NCCL INFO logs reveal
  // The job's step timed without the profiler (its own logs), ns; 0: unknown. Anchors the replay's
  // un-profiled step (diagnosis/what_if: anchorProfilerCost).
  double measured_step_ns = 0;
};

// Builds the facts once (the ranking included).
Facts buildFacts(const RunAnalysis& run, const DiagnosisInputs& in);

// The ranking of the bottleneck categories from the per-step means: each idle nanosecond counted in
// one category (the loader's share taken from the cause it was classified under), so the shares
// add up to the step.
std::vector<BottleneckShare> rankBottlenecks(const StepMeans& m);
// The ranking's categories grouped by what limits the step: "compute", "communication", "copies",
// and "host" (host_launch, input, sync, other_idle: the GPU idles because nothing is queued yet), so
// that a host-bound step split into small idle causes is still called host-bound.
std::string_view groupOf(std::string_view category);
std::vector<BottleneckShare> groupBottlenecks(const std::vector<BottleneckShare>& ranking);

}  // namespace gpudoctor
