#include "analysis/kernel_class.h"

#include "model/comm_kernels.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace gpudoctor {

namespace {
bool has(std::string_view s, std::string_view what) { return s.find(what) != std::string_view::npos; }
bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// The name of the kernel without a leading "void " and its template/argument list.
std::string_view kernelStem(std::string_view n) {
  if (startsWith(n, "void ")) n.remove_prefix(5);
  return n;
}

// A lower-cased kernel stem that names a matrix multiply.
bool gemmStem(std::string_view ln) {
  return has(ln, "gemm") || startsWith(ln, "nvjet") || has(ln, "cutlass") || has(ln, "xmma") ||
         has(ln, "splitkreduce") || has(ln, "cublaslt") || has(ln, "wgmma");
}

KernelClass gemmPrecision(std::string_view ln, std::string_view dtype) {
  if (has(ln, "e4m3") || has(ln, "e5m2") || has(ln, "fp8") || has(ln, "f8f8")) return KernelClass::kGemmFp8;
  if (has(ln, "tf32")) return KernelClass::kGemmTf32;
  if (has(ln, "bf16") || has(ln, "bfloat16")) return KernelClass::kGemmBf16;
  if (has(ln, "sgemm") || has(ln, "simt") || has(ln, "ffma") || has(ln, "f32f32_f32f32_f32"))
    return KernelClass::kGemmFp32Simt;
  if (has(ln, "hgemm") || has(ln, "fp16") || has(ln, "f16f16")) return KernelClass::kGemmFp16;
  // Hopper nvjet / cuBLASLt kernels do not spell the precision out: ask the operator.
  if (has(dtype, "BFloat16")) return KernelClass::kGemmBf16;
  if (has(dtype, "Half")) return KernelClass::kGemmFp16;
  if (has(dtype, "Float8")) return KernelClass::kGemmFp8;
  // FP32 inputs without "tf32" in the name: cuBLAS's plain FP32 path (helper kernels such as
  // splitKreduce and epilogues included). Hopper names like nvjet_*_tst_* do not mean TF32.
  if (dtype == "float") return KernelClass::kGemmFp32Simt;
  return KernelClass::kGemmOther;
}
}  // namespace

std::string_view kernelClassName(KernelClass c) {
  switch (c) {
    case KernelClass::kGemmFp32Simt: return "gemm_fp32_simt";
    case KernelClass::kGemmTf32: return "gemm_tf32";
    case KernelClass::kGemmFp16: return "gemm_fp16";
    case KernelClass::kGemmBf16: return "gemm_bf16";
    case KernelClass::kGemmFp8: return "gemm_fp8";
    case KernelClass::kGemmOther: return "gemm_other";
    case KernelClass::kAttentionFused: return "attention_fused";
    case KernelClass::kAttentionUnfused: return "attention_unfused";
    case KernelClass::kElementwise: return "elementwise";
    case KernelClass::kReduction: return "reduction";
    case KernelClass::kNormalization: return "normalization";
    case KernelClass::kOptimizer: return "optimizer";
    case KernelClass::kNccl: return "nccl";
    case KernelClass::kCommOther: return "comm_other";
    case KernelClass::kCopy: return "copy";
    case KernelClass::kOther: return "other";
  }
  return "other";
}

bool isGemm(KernelClass c) { return c <= KernelClass::kGemmOther; }

bool isGemmKernelName(std::string_view name) { return gemmStem(lower(kernelStem(name))); }

bool isLayoutTransposeKernel(std::string_view name) { return has(name, "nchwToNhwc") || has(name, "nhwcToNchw"); }

bool isFp32FusedAttentionKernel(std::string_view name) {
  std::string ln = lower(name);
  if (has(ln, "cudnn") || has(ln, "bf16") || has(ln, "bfloat16") || has(ln, "_f16") || has(ln, "half") || has(ln, "fp16"))
    return false;
  return has(ln, "_f32") || has(ln, "float>") || has(ln, "fp32");
}

bool isNcclKernel(std::string_view name) { return commKernelLibrary(name) == "nccl"; }

KernelClass classifyKernel(std::string_view name, std::string_view op, std::string_view dtype) {
  if (std::string_view lib = commKernelLibrary(name); !lib.empty())
    return lib == "nccl" ? KernelClass::kNccl : KernelClass::kCommOther;
  std::string ln = lower(kernelStem(name));
  // Fused attention first: its kernels contain "gemm"-like words too.
  if (has(ln, "flash") || has(ln, "fmha") || has(ln, "sdpa") || has(ln, "attention") ||
      has(op, "scaled_dot_product") || has(op, "flash_attention") || has(op, "efficient_attention") ||
      has(op, "cudnn_attention"))
    return KernelClass::kAttentionFused;
  const bool gemm = gemmStem(ln);
  // A hand-written attention shows as batched GEMMs and a softmax issued by bmm / softmax ops.
  if ((gemm && (op == "aten::bmm" || op == "aten::baddbmm")) ||
      (op == "aten::_softmax" || op == "aten::_softmax_backward_data"))
    return KernelClass::kAttentionUnfused;
  if (gemm) return gemmPrecision(ln, dtype);
  if (has(ln, "multi_tensor_apply") || has(ln, "fusedoptimizer") || has(ln, "adam") || has(ln, "_sgd") ||
      has(op, "_foreach_") || has(op, "_fused_adam") || has(op, "_fused_sgd"))
    return KernelClass::kOptimizer;
  if (has(ln, "norm")) return KernelClass::kNormalization;  // layer_norm, rms_norm, batch_norm, GammaBeta...
  if (has(ln, "gammabeta")) return KernelClass::kNormalization;
  if (has(ln, "copy") || has(ln, "catarray") || has(ln, "cat_") || has(ln, "transpose")) return KernelClass::kCopy;
  if (has(ln, "reduce") || has(ln, "softmax") || has(ln, "nll_loss") || has(ln, "cross_entropy") || has(ln, "sort") ||
      has(ln, "scan") || has(ln, "argmax") || has(ln, "topk"))
    return KernelClass::kReduction;
  if (has(ln, "elementwise") || has(ln, "functor") || has(ln, "triton_poi") || has(ln, "fill") || has(ln, "index") ||
      has(ln, "gather") || has(ln, "scatter") || has(ln, "embedding"))
    return KernelClass::kElementwise;
  if (has(ln, "triton_red") || has(ln, "triton_per")) return KernelClass::kReduction;
  return KernelClass::kOther;
}

}  // namespace gpudoctor
