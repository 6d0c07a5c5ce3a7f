// The planner: memory per GPU and predicted step time of a training configuration (precision,
// micro-batch, accumulation, recomputation, ZeRO stage, TP x PP x DP), and a search over all of
// them for what fits and runs fastest. Every constant and assumption is a named field or a stated
// formula (docs/reference/plan.md). Pure arithmetic, no I/O.
#pragma once
#include <string>
#include <vector>

#include "planning/transformer.h"

namespace gpudoctor {

// kBf16Mixed / kFp16Mixed: 16-bit weights and gradients with fp32 master weights in the optimizer
// (Megatron, DeepSpeed). kAmp: PyTorch autocast, fp32 weights and gradients, 16-bit compute.
enum class Precision { kFp32, kBf16Mixed, kFp16Mixed, kAmp };
enum class Recompute { kNone, kSelective, kFull };
std::string_view precisionName(Precision p);
std::string_view recomputeName(Recompute r);

struct ClusterSpec {
  std::string gpu = "h200";
  double memory_bytes = 141e9;  // per GPU
  double peak_tflops = 989;     // dense 16-bit tensor-core peak (datasheet or measured)
  double fp32_tflops = 67;      // FP32 (non-tensor-core) peak
  double hbm_gbps = 4800;       // memory bandwidth (the optimizer step is bound by it)
  double efficiency = 0.55;     // achieved fraction of peak in GEMM-heavy training (stated assumption)
  int gpus_per_node = 8;
  int nodes = 1;
  double intra_busbw_gbps = 350;  // NVLink allreduce bus bandwidth (nccl-tests, 2 x H200: 351 GB/s)
  double inter_busbw_gbps = 45;   // per GPU across nodes (400 Gb/s NIC per GPU at ~90 %)
  int gpus() const { return gpus_per_node * nodes; }
};

// Datasheet figures for a GPU name (h100, h200, a100-40g, a100-80g, l40s); Error lists the known.
Result<ClusterSpec> gpuPreset(const std::string& name);

struct TrainSpec {
  int64_t global_batch = 0;  // samples (sequences) per optimizer step
  Precision precision = Precision::kBf16Mixed;
  std::string optimizer = "adamw";      // adamw | sgd
  bool fp32_grad_accumulation = false;  // Megatron-style fp32 main_grad: 18 bytes/param with AdamW
  bool flash_attention = true;          // the attention score matrices are never stored
  bool sequence_parallel = true;        // with TP, norms and dropout activations are split too
  double memory_threshold = 0.95;       // the guide's limit
  double dp_overlap = 0.5;              // share of data-parallel communication hidden behind backward
  double framework_bytes = 1.5e9;       // CUDA context, NCCL and cuBLAS workspaces (outside the allocator)
};

struct ParallelConfig {
  int tp = 1, pp = 1, dp = 1, zero = 0;
  Recompute recompute = Recompute::kNone;
  int64_t micro_batch = 1, accum = 1;
};

// Bytes per GPU.
struct MemoryBreakdown {
  double params = 0, grads = 0, optimizer = 0, activations = 0, logits = 0, buffers = 0, framework = 0;
  double allocator_headroom = 0;
  double total() const {
    return params + grads + optimizer + activations + logits + buffers + framework + allocator_headroom;
  }
  double allocated() const { return total() - framework; }  // what torch.cuda.max_memory_allocated sees
};

struct StepEstimate {
  double compute_s = 0, optimizer_s = 0, bubble_s = 0, dp_comm_s = 0, dp_exposed_s = 0, tp_comm_s = 0, pp_comm_s = 0;
  double step_s = 0, tokens_per_s = 0, mfu = 0;
};

struct PlanResult {
  ParallelConfig cfg;
  MemoryBreakdown mem;
  StepEstimate time;
  bool fits = false;
};

// Model states per GPU for psi parameters (ZeRO paper's arithmetic): params, grads, optimizer.
struct ModelStates {
  double params = 0, grads = 0, optimizer = 0;
  double total() const { return params + grads + optimizer; }
};
ModelStates modelStatesPerGpu(double psi, const TrainSpec& t, int zero, int dp);

// Activation bytes of one layer for one micro-batch on one GPU (Korthikanti et al. 2022).
double activationBytesPerLayer(const ModelSpec& m, const TrainSpec& t, const ParallelConfig& c);
// Memory of one configuration.
MemoryBreakdown memoryPerGpu(const ModelSpec& m, const TrainSpec& t, const ParallelConfig& c);
// Step time of one configuration.
StepEstimate stepTime(const ModelSpec& m, const ClusterSpec& k, const TrainSpec& t, const ParallelConfig& c);
// Checks that a configuration is possible for the model and cluster; Error says why not.
Status validateConfig(const ModelSpec& m, const ClusterSpec& k, const TrainSpec& t, const ParallelConfig& c);

// Pins: -1 / empty leaves a dimension free for the search.
struct SearchPins {
  int tp = -1, pp = -1, zero = -1;
  int64_t micro_batch = -1;
  int recompute = -1;  // Recompute as int
};

// Every valid configuration, evaluated; fitting ones first, by step time.
std::vector<PlanResult> searchPlans(const ModelSpec& m, const ClusterSpec& k, const TrainSpec& t,
                                    const SearchPins& pins);

}  // namespace gpudoctor
