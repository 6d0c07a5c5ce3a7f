#include "analysis/kernel_class.h"

#include "analysis/precision_kinds.h"

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

// The name of the kernel without a leading "void " and its argument list (the template arguments
// stay: they carry the precision and the functor). Argument types would mislead: FBGEMM's embedding
// kernels take an fbgemm_gpu::FixedDivisor, which says "gemm".
std::string_view kernelStem(std::string_view n) {
  if (startsWith(n, "void ")) n.remove_prefix(5);
  constexpr std::string_view kAnon = "(anonymous namespace)";
  int depth = 0;
  for (size_t i = 0; i < n.size(); ++i) {
    if (n[i] == '<') ++depth;
    if (n[i] == '>' && depth > 0) --depth;
    if (n[i] != '(' || depth > 0) continue;
    if (n.substr(i, kAnon.size()) == kAnon)
      i += kAnon.size() - 1;
    else
      return n.substr(0, i);
  }
  return n;
}

// A lower-cased kernel stem that names a matrix multiply: cuBLAS/cuBLASLt, CUTLASS, xmma, nvjet,
// wgmma; ROCm's Tensile GEMMs (hipBLASLt/rocBLAS "Cijk_..."); Triton matmuls ("_matmul_ogs_...");
// TensorRT-LLM's batched GEMMs ("bmm_E4m3_..."); cuBLASLt's epilogue kernels. CK's GEMMs and
// convolutions say "gemm" too.
bool gemmStem(std::string_view ln) {
  return has(ln, "gemm") || startsWith(ln, "nvjet") || has(ln, "cutlass") || has(ln, "xmma") ||
         has(ln, "splitkreduce") || has(ln, "cublaslt") || has(ln, "wgmma") || startsWith(ln, "cijk_") ||
         startsWith(ln, "_matmul_") || startsWith(ln, "matmul_") || startsWith(ln, "bmm_") ||
         startsWith(ln, "epilogue::") || has(ln, "gemv");
}

// A lower-cased kernel stem that names a convolution that no GEMM word names: cuDNN's SIMT
// convolutions (cudnn_*_scudnn_*), its older dgrad/wgrad engines, Winograd and FFT transforms,
// CUTLASS and cuDNN fprop kernels, CK's grouped convolutions. Convolutions count as GEMMs: cuDNN and
// MIOpen run them as (implicit) GEMMs, and their precision is what the precision rules judge.
bool convStem(std::string_view ln) {
  return has(ln, "scudnn") || has(ln, "hcudnn") || has(ln, "dgrad") || has(ln, "wgrad") || has(ln, "winograd") ||
         startsWith(ln, "fft2d_") || has(ln, "fprop") || has(ln, "convolve") || has(ln, "grouped_conv");
}

// The precision an operator's first input dtype gives, for names silent about it.
KernelClass dtypePrecision(std::string_view dtype) {
  if (has(dtype, "BFloat16")) return KernelClass::kGemmBf16;
  if (has(dtype, "Half")) return KernelClass::kGemmFp16;
  if (has(dtype, "Float8")) return KernelClass::kGemmFp8;
  // FP32 inputs without "tf32" in the name: cuBLAS's plain FP32 path (helper kernels such as
  // splitKreduce and epilogues included). Hopper names like nvjet_*_tst_* do not mean TF32.
  if (dtype == "float") return KernelClass::kGemmFp32Simt;
  return KernelClass::kGemmOther;
}

// The first template argument ("float" of "dgrad_engine<float, 512, ...>"); empty without one.
std::string_view firstTemplateArg(std::string_view ln) {
  size_t open = ln.find('<');
  if (open == std::string_view::npos) return {};
  std::string_view rest = ln.substr(open + 1);
  return rest.substr(0, rest.find_first_of(",>"));
}

// An FP32 tensor-op tile (s1688 / s16816: single-precision data on tensor cores) is TF32 unless
// the name says its inputs are half ("cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4", A100).
bool tf32Tile(std::string_view ln) {
  return (has(ln, "s1688") || has(ln, "s16816")) && !has(ln, "f16") && !has(ln, "fp16") && !has(ln, "half");
}

KernelClass gemmPrecision(std::string_view ln, std::string_view dtype) {
  if (has(ln, "e4m3") || has(ln, "e5m2") || has(ln, "fp8") || has(ln, "f8f8")) return KernelClass::kGemmFp8;
  // CUTLASS's type is cutlass::tfloat32_t (in cuDNN's mangled ImplicitGemmConvolution kernels).
  if (has(ln, "tf32") || has(ln, "tfloat32")) return KernelClass::kGemmTf32;
  if (has(ln, "bf16") || has(ln, "bfloat16")) return KernelClass::kGemmBf16;
  if (tf32Tile(ln)) return KernelClass::kGemmTf32;
  // SIMT GEMMs, and cuDNN's single-precision SIMT convolutions (cudnn_volta_scudnn_*).
  if (has(ln, "sgemm") || has(ln, "simt") || has(ln, "ffma") || has(ln, "f32f32_f32f32_f32") || has(ln, "scudnn"))
    return KernelClass::kGemmFp32Simt;
  if (has(ln, "hgemm") || has(ln, "fp16") || has(ln, "f16f16") || has(ln, "hcudnn")) return KernelClass::kGemmFp16;
  // Hopper nvjet / cuBLASLt kernels do not spell the precision out: ask the operator. Without one,
  // a cuBLAS kernel templated on float (gemmk1_kernel<float, ...>) is FP32, and an nvjet kernel's type
  // letters (nvjet_sm90_<A/B><compute><C/D>_...) give its inputs: t bf16, h fp16. Seen on an H200 (the
  // lab's traces): tst under bf16 autocast, tss for bf16 inputs with FP32 outputs, hsh in cuDNN's FP16 RNN.
  if (dtype.empty() && firstTemplateArg(ln) == "float") return KernelClass::kGemmFp32Simt;
  if (dtype.empty() && startsWith(ln, "nvjet_sm")) {
    const size_t u = ln.find('_', 6);  // after "nvjet_smNN"
    if (u != std::string_view::npos && u + 4 < ln.size() && ln[u + 4] == '_') {
      if (ln[u + 1] == 't') return KernelClass::kGemmBf16;
      if (ln[u + 1] == 'h') return KernelClass::kGemmFp16;
    }
  }
  return dtypePrecision(dtype);
}

// Tensile names its kernels "Cijk_<A index>_<B index>_<type code>_...": the type code's first
// letter is the input type. Seen in the corpus: BBS and B (bf16) on MI210/MI300X, SB and S (fp32)
// on MI250/MI300X; H (fp16) and F8 follow the same scheme. FP32 runs on the matrix cores in full
// FP32 (no reduced-precision path), so it joins the plain FP32 class.
KernelClass tensilePrecision(std::string_view ln, std::string_view dtype) {
  size_t pos = 0;
  for (int field = 0; field < 3; ++field) {  // "cijk", the A index, the B index
    pos = ln.find('_', pos);
    if (pos == std::string_view::npos) return dtypePrecision(dtype);
    ++pos;
  }
  std::string_view code = ln.substr(pos);
  if (startsWith(code, "f8")) return KernelClass::kGemmFp8;
  if (startsWith(code, "b")) return KernelClass::kGemmBf16;
  if (startsWith(code, "h")) return KernelClass::kGemmFp16;
  if (startsWith(code, "s")) return KernelClass::kGemmFp32Simt;
  return dtypePrecision(dtype);
}

// cuDNN's convolution engines and transforms templated on their data type (dgrad_engine<float, ...>,
// winogradForwardData4x4<float, float>): float there is FP32 on the SIMT cores.
KernelClass convPrecision(std::string_view ln, std::string_view dtype) {
  KernelClass c = gemmPrecision(ln, dtype);
  if ((c == KernelClass::kGemmOther || c == KernelClass::kGemmFp32Simt) && firstTemplateArg(ln) == "float")
    return KernelClass::kGemmFp32Simt;
  return c;
}

// The precision of a GEMM kernel. TensorRT-LLM's "bmm_<A type>_<B type>_..." is
// read by its activations' type (bmm_Bfloat16_MxE2m1MxE4m3_...: bf16 activations, FP4 weights).
KernelClass matmulPrecision(std::string_view ln, std::string_view dtype) {
  if (startsWith(ln, "cijk_")) return tensilePrecision(ln, dtype);
  if (startsWith(ln, "bmm_")) {
    std::string_view a = ln.substr(4);
    return gemmPrecision(a.substr(0, a.find('_')), dtype);
  }
  return gemmPrecision(ln, dtype);
}

// "cast" as a word of its own (per_token_cast_to_fp8, cuda::cast_back_impl), not inside
// "broadcast", nor C++'s static_cast in a template argument.
bool castWord(std::string_view ln) {
  for (size_t p = ln.find("cast"); p != std::string_view::npos; p = ln.find("cast", p + 1)) {
    const bool word = p == 0 || !std::isalpha(static_cast<unsigned char>(ln[p - 1]));
    if (word && !(p >= 7 && ln.substr(p - 7, 7) == "static_")) return true;
  }
  return false;
}

// Inductor's generated kernels (triton_poi_*, triton_red_*) list the operators they fuse: an
// attention operator named there is not what the kernel does.
bool fusedAttention(std::string_view ln, std::string_view op) {
  if (startsWith(ln, "triton_")) return false;
  return has(ln, "flash") || has(ln, "fmha") || has(ln, "sdpa") || has(ln, "attention") || has(ln, "attn_fwd") ||
         has(ln, "attn_bwd") || startsWith(ln, "sage_fwd") || has(op, "scaled_dot_product") ||
         has(op, "flash_attention") || has(op, "efficient_attention") || has(op, "cudnn_attention");
}

// foreach copies (aten::_foreach_copy_: a serving engine's input buffers, a model's state) run the
// multi-tensor kernel with a Copy functor: data movement, not an optimizer's update.
bool foreachCopy(std::string_view ln, std::string_view op) {
  return has(op, "_foreach_copy") || (has(ln, "multi_tensor_apply") && has(ln, "native::copy<"));
}

bool optimizerKernel(std::string_view ln, std::string_view op) {
  return has(ln, "multi_tensor_apply") || has(ln, "fusedoptimizer") || has(ln, "adam") || has(ln, "_sgd") ||
         has(op, "_foreach_") || has(op, "_fused_adam") || has(op, "_fused_sgd");
}

// layer_norm, rms_norm, batch_norm, GammaBeta, MIOpenBatchNorm*, cuDNN's bn_fw_* / bn_bw_*, and the
// moments kernel of group / layer norm.
bool normalizationKernel(std::string_view ln) {
  return has(ln, "norm") || has(ln, "gammabeta") || has(ln, "bn_fw") || has(ln, "bn_bw") || has(ln, "rowwisemoments");
}

// Activations and other pointwise kernels whose names say so (also when fused with a cast).
bool activationKernel(std::string_view ln) {
  return has(ln, "swiglu") || has(ln, "silu") || has(ln, "gelu") || has(ln, "act_and_mul") || has(ln, "rotary") ||
         has(ln, "dropout");
}

// Data movement: copies, concatenation, layout transposes (cuDNN nchwToNhwc, MIOpen
// batched_transpose, im2col), cuDNN's layout transforms around NHWC grouped convolutions
// (tensorTransformGeneric, convertTensor_kernel, nhwcSliceCKernel, nhwcAddPaddingKernel), permutes,
// rolls (torch.roll: roll_cuda_kernel, Swin's shifted windows), casts and quantization, KV-cache stores.
bool copyKernel(std::string_view ln) {
  return has(ln, "copy") || startsWith(ln, "at::native::roll_cuda_kernel") || has(ln, "catarray") || has(ln, "cat_") ||
         has(ln, "transpose") || has(ln, "nchwtonhwc") || has(ln, "nhwctonchw") || has(ln, "im2col") ||
         has(ln, "im2d2col") || has(ln, "permute") || castWord(ln) || has(ln, "quant") || has(ln, "kvcache") ||
         has(ln, "kv_cache") || has(ln, "tensortransform") || has(ln, "converttensor") || has(ln, "nhwcslicec") ||
         has(ln, "nhwcaddpadding");
}

// "sort" as in a sort, not inside "tensor" + "t..." (tensorTransformGeneric, TensorToT...).
bool sortWord(std::string_view ln) {
  for (size_t p = ln.find("sort"); p != std::string_view::npos; p = ln.find("sort", p + 1))
    if (p < 3 || ln.substr(p - 3, 3) != "ten") return true;
  return false;
}

bool reductionKernel(std::string_view ln) {
  return has(ln, "reduce") || has(ln, "softmax") || has(ln, "nll_loss") || has(ln, "cross_entropy") || sortWord(ln) ||
         has(ln, "scan") || has(ln, "argmax") || has(ln, "topk") || has(ln, "_pool");
}

// MIOpen's tensor ops (SubTensorOpWithScalar1d, ...) and cuDNN's scalePackedTensor are pointwise, so are
// cuDNN's RNN cell kernels (elemWiseRNNcell) and EmbeddingBag's backward (compute_grad_weight_bags).
bool elementwiseKernel(std::string_view ln) {
  return has(ln, "elementwise") || startsWith(ln, "elemwisernncell") || has(ln, "compute_grad_weight") ||
         has(ln, "functor") || has(ln, "fill") || has(ln, "memset") || has(ln, "index") || has(ln, "indices") ||
         has(ln, "gather") || has(ln, "scatter") || has(ln, "embedding") || has(ln, "subtensorop") ||
         has(ln, "scalepackedtensor") || startsWith(ln, "scal_kernel") || has(ln, "triton_poi");
}

// Convolutions that are not GEMMs: PyTorch's native depthwise kernels (conv_depthwise2d_forward_kernel,
// _backward_kernel, _grad_weight_kernel and the 3d ones; in the lab's MobileNet and EfficientNet traces,
// PyTorch 2.11) and cuDNN's runtime-compiled depthwise one (conv2d_c1_k1_nhwc_specialized, the lab's
// channels-last EfficientNet). Memory-bound stencils: autocast does not move them like GEMMs.
bool directConvolutionKernel(std::string_view ln) {
  return has(ln, "conv_depthwise") || startsWith(ln, "conv2d_c1_k1");
}

// Classes by the kernel name alone, after communication, attention and GEMMs.
KernelClass classByName(std::string_view ln) {
  if (directConvolutionKernel(ln)) return KernelClass::kConvDirect;
  if (normalizationKernel(ln)) return KernelClass::kNormalization;
  if (activationKernel(ln)) return KernelClass::kElementwise;
  if (copyKernel(ln)) return KernelClass::kCopy;
  if (reductionKernel(ln)) return KernelClass::kReduction;
  if (elementwiseKernel(ln)) return KernelClass::kElementwise;
  if (startsWith(ln, "triton_red") || startsWith(ln, "triton_per")) return KernelClass::kReduction;
  return KernelClass::kOther;
}
}  // namespace

std::string_view kernelClassName(KernelClass c) {
  switch (c) {
    case KernelClass::kGemmFp32Simt:
      return "gemm_fp32_simt";
    case KernelClass::kGemmTf32:
      return "gemm_tf32";
    case KernelClass::kGemmFp16:
      return "gemm_fp16";
    case KernelClass::kGemmBf16:
      return "gemm_bf16";
    case KernelClass::kGemmFp8:
      return "gemm_fp8";
    case KernelClass::kGemmOther:
      return "gemm_other";
    case KernelClass::kAttentionFused:
      return "attention_fused";
    case KernelClass::kAttentionUnfused:
      return "attention_unfused";
    case KernelClass::kElementwise:
      return "elementwise";
    case KernelClass::kReduction:
      return "reduction";
    case KernelClass::kNormalization:
      return "normalization";
    case KernelClass::kOptimizer:
      return "optimizer";
    case KernelClass::kNccl:
      return "nccl";
    case KernelClass::kCommOther:
      return "comm_other";
    case KernelClass::kCopy:
      return "copy";
    case KernelClass::kConvDirect:
      return "conv_direct";
    case KernelClass::kOther:
      return "other";
  }
  return "other";
}

bool isGemm(KernelClass c) { return c <= KernelClass::kGemmOther; }

bool isGemmKernelName(std::string_view name) { return gemmStem(lower(kernelStem(name))); }

bool isLayoutTransposeKernel(std::string_view name) {
  // cuDNN's (cudnn::ops:: and cudnn::engines_precompiled::), and MIOpen's batched_transpose_<tile>_<type>
  // around its NHWC-only implicit-GEMM convolutions (igemm_*_nhwc_*), which carry no namespace; a
  // library's own transpose template (DeepSeek's cuda::batched_transpose<...> for FP8 GEMM operands) is not one.
  return has(name, "nchwToNhwc") || has(name, "nhwcToNchw") || name.starts_with("batched_transpose_");
}

bool isCudnnTensorTransformKernel(std::string_view name) {
  return has(name, "genericTranspose_kernel") || has(name, "tensorTransformGeneric");
}

int gemmOperandAlignmentBytes(std::string_view name) {
  if (!has(name, "tensorop") || !has(name, "gemm")) return 0;
  const size_t at = name.rfind("_align");
  if (at == std::string_view::npos) return 0;
  int elements = 0;
  for (size_t i = at + 6; i < name.size() && name[i] >= '0' && name[i] <= '9'; ++i)
    elements = 10 * elements + (name[i] - '0');
  // 16-bit operands: bf16 (bf16_s16816gemm_bf16), f16 (f16_s16816gemm_f16, h1688gemm); else TF32
  // (tensorop_s1688gemm, tf32).
  const bool half = has(name, "bf16") || has(name, "f16") || has(name, "h1688gemm") || has(name, "h16816gemm");
  return elements * (half ? 2 : 4);
}

bool isBatchNormKernelName(std::string_view name) {
  const std::string ln = lower(name);
  return has(ln, "bn_fw") || has(ln, "bn_bw") || has(ln, "batch_norm") || has(ln, "batchnorm");
}

bool isNchwBatchNormKernelName(std::string_view name) {
  if (!isBatchNormKernelName(name)) return false;
  const std::string ln = lower(name);
  return !has(ln, "nhwc") && !has(ln, "channels_last");
}

bool isConvolutionKernelName(std::string_view name) {
  const std::string ln = lower(name);
  if (has(ln, "bn_fw") || has(ln, "bn_bw") || has(ln, "transpose") || has(ln, "nchwtonhwc") || has(ln, "nhwctonchw") ||
      has(ln, "reduce_wgrad") || has(ln, "tensortransform"))
    return false;
  return has(ln, "conv") || has(ln, "fprop") || has(ln, "dgrad") || has(ln, "wgrad") || has(ln, "implicit_gemm") ||
         has(ln, "scudnn") || has(ln, "winograd");
}

bool isFp32FusedAttentionKernel(std::string_view name) {
  std::string ln = lower(name);
  if (has(ln, "cudnn") || has(ln, "bf16") || has(ln, "bfloat16") || has(ln, "_f16") || has(ln, "half") ||
      has(ln, "fp16"))
    return false;
  return has(ln, "_f32") || has(ln, "float>") || has(ln, "fp32");
}

bool isNcclKernel(std::string_view name) { return commKernelLibrary(name) == "nccl"; }

KernelClass classifyKernel(std::string_view name, std::string_view op, std::string_view dtype) {
  if (std::string_view lib = commKernelLibrary(name); !lib.empty())
    return lib == "nccl" ? KernelClass::kNccl : KernelClass::kCommOther;
  std::string ln = lower(kernelStem(name));
  // Fused attention first: its kernels contain "gemm"-like words too.
  if (fusedAttention(ln, op)) return KernelClass::kAttentionFused;
  const bool gemm = gemmStem(ln);
  // A hand-written attention shows as batched GEMMs and a softmax issued by bmm / softmax ops.
  if ((gemm && (op == "aten::bmm" || op == "aten::baddbmm")) ||
      (op == "aten::_softmax" || op == "aten::_softmax_backward_data"))
    return KernelClass::kAttentionUnfused;
  if (gemm) return matmulPrecision(ln, dtype);
  if (convStem(ln)) return convPrecision(ln, dtype);
  if (foreachCopy(ln, op)) return KernelClass::kCopy;
  if (optimizerKernel(ln, op)) return KernelClass::kOptimizer;
  KernelClass c = classByName(ln);
  // Kernels named for their arithmetic only (group norm's ComputeFusedParamsCUDAKernel, ...): the
  // operator tells.
  if (c == KernelClass::kOther && has(op, "_norm")) return KernelClass::kNormalization;
  return c;
}

}  // namespace gpudoctor
