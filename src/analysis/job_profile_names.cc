#include "analysis/job_profile_names.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "analysis/breakdown.h"
#include "model/comm_kernels.h"

// The profile names framework features, so it reads the framework's own operator and range names
// (PyTorch's: aten::*, autograd::engine::*, Optimizer.step#*, ...), all of them in the table
// below, classified once per interned string. That is deliberately not done with reader roles:
// the features are PyTorch's by definition, a source without these names gets "unknown", and
// Event::roles has one free bit for some twenty names. Steps, loader, optimizer ranges, blocking
// calls, collectives and graph launches still come from the reader's roles.
namespace gpudoctor::job_profile_detail {
namespace {

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

}  // namespace

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
  // On autocast's FP32 list too: the elementwise math of hand-written norms (T5's, Llama's RMSNorm).
  if (n == "aten::pow" || n == "aten::rsqrt" || n == "aten::exp" || n == "aten::sum") f |= kAutocastFp32;
  static constexpr std::string_view kViewOps[] = {
      "aten::view",      "aten::reshape", "aten::_unsafe_view",     "aten::transpose",  "aten::permute",
      "aten::t",         "aten::expand",  "aten::unsqueeze",        "aten::squeeze",    "aten::flatten",
      "aten::unflatten", "aten::split",   "aten::split_with_sizes", "aten::chunk",      "aten::narrow",
      "aten::slice",     "aten::select",  "aten::as_strided",       "aten::contiguous", "aten::detach"};
  for (auto g : kViewOps)
    if (n == g) f |= kViewOp;
  if (n == "aten::scaled_dot_product_attention") f |= kSdpa;
  if (n == "aten::_scaled_dot_product_attention_math") f |= kSdpaMath;
  if (n == "aten::group_norm") f |= kGroupNorm;
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
  if (has(n, "StreamBeginCapture") || has(n, "GraphInstantiate")) f |= kGraphCapture;
  if (has(n, "backward") || has(n, "Backward") || has(n, "_bwd") || has(n, "dgrad") || has(n, "wgrad") ||
      has(n, "bn_bw_"))
    f |= kBackward;
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

}  // namespace gpudoctor::job_profile_detail
