// The names the job profile reads (internal to analysis/job_profile*.cc): each interned string's
// framework features (NameFlag), the forward operators a recomputation re-runs, the precision of a
// tensor-core eligible kernel and the kind of copy a sync waited for.
#pragma once
#include <cstdint>
#include <string_view>

#include "analysis/kernel_class.h"

namespace gpudoctor::job_profile_detail {

inline bool has(std::string_view s, std::string_view w) { return s.find(w) != std::string_view::npos; }
inline bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

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
  kGraphCapture = 1u << 22,     // cudaStreamBeginCapture / cudaGraphInstantiate (and HIP's, the driver's)
  kBackward = 1u << 23,         // backward work by name: *_backward operators, *Backward nodes, bwd/dgrad/wgrad kernels
  kViewOp = 1u << 24,           // views and reshapes: the same data, the same precision
  kSdpa = 1u << 25,             // aten::scaled_dot_product_attention: the job asks for fused attention
  kSdpaMath = 1u << 26,         // aten::_scaled_dot_product_attention_math: SDPA fell back to its math backend
  kGroupNorm = 1u << 27,        // aten::group_norm: a normalization without NHWC kernels
};

// The features a name shows (NameFlag bits), from the framework's own operator and range names.
uint32_t nameFlags(std::string_view n);
// 1 + the index of a forward operator that a backward formula does not call; 0 for any other name.
uint8_t forwardEntryOf(std::string_view n);

// Precision buckets of tensor-core eligible kernels.
enum Prec : int8_t { kFp32, kTf32, kBf16, kFp16, kFp8, kPrecUnknown, kNotEligible };
// The precision of a kernel of class cls run under an operator of dtype ("" where none is known);
// kNotEligible for kernels that are not GEMM, convolution or attention.
Prec precisionOf(std::string_view name, KernelClass cls, std::string_view dtype);
// "fp32", "tf32", "bf16", "fp16", "fp8" for those buckets; empty otherwise.
std::string_view precName(int p);

// Copy kinds a sync waited for.
enum CopyKind : uint8_t { kNoCopy, kDtoH, kHtoDPageable, kHtoDPinned, kDtoD, kOtherCopy };
std::string_view copyKindName(uint8_t k);
// The kind of a memcpy event, from its name.
uint8_t copyKindOf(std::string_view memcpy_name);

}  // namespace gpudoctor::job_profile_detail
