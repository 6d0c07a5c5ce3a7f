// Ceilings: what a GPU can do at best, per precision and per data path. Measured by `bench gpu`
// (written as JSON with --ceilings-out) or taken from a datasheet; `analyze --ceilings` divides
// achieved figures by them (MFU, % of bandwidth). Plain data.
#pragma once
#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace gpudoctor {

// GEMM precisions the ceilings distinguish (TF32: fp32 storage, TF32 tensor cores).
enum class GemmPrecision : uint8_t { kFp32, kTf32, kFp16, kBf16, kFp8 };
constexpr int kGemmPrecisionCount = 5;
// "fp32", "tf32", "fp16", "bf16", "fp8".
std::string_view gemmPrecisionName(GemmPrecision p);
// Inverse of gemmPrecisionName; nullopt for an unknown name.
std::optional<GemmPrecision> gemmPrecisionFromName(std::string_view name);

struct Ceilings {
  std::string device;                                               // "NVIDIA H200"
  std::string source;                                               // "gpudoctor bench gpu" or "datasheet"
  std::array<double, kGemmPrecisionCount> tflops{};                 // dense GEMM TFLOP/s per precision; 0 = unknown
  double hbm_copy_gbps = 0, hbm_read_gbps = 0, hbm_write_gbps = 0;  // GB/s = 1e9 bytes/s
  double h2d_pinned_gbps = 0, h2d_pageable_gbps = 0;
  double d2h_pinned_gbps = 0, d2h_pageable_gbps = 0;
  double p2p_gbps = 0;  // one direction between two GPUs; 0 = one GPU / unknown
  // The TFLOP/s of a precision, 0 when unknown.
  double peak(GemmPrecision p) const { return tflops[static_cast<int>(p)]; }
};

// Datasheet figures (dense, no sparsity) for GPUs we know by name (H100 SXM, H200 SXM); nullopt
// otherwise. HBM is the datasheet's bandwidth for copy, read and write alike; PCIe Gen5 x16 is 64 GB/s
// per direction (pinned and pageable alike: a datasheet does not know the host); NVLink 4 is 450 GB/s
// per direction.
std::optional<Ceilings> datasheetCeilings(std::string_view device_name);

// What `bench gpu` measured on a GPU of this kind (H200 SXM, 2026-11-30, docs/bench_gpu.md: GEMM
// FP32 51.8 / TF32 412.7 / FP16 769.6 / BF16 798.1 / FP8 1477.3 TFLOP/s, host-to-device pageable 7.4
// and pinned 55.5 GB/s, device-to-host 11.5 / 55.2); else the datasheet's figures (H100 SXM), which
// know no pageable rate; nullopt for other GPUs.
std::optional<Ceilings> builtinCeilings(std::string_view device_name);

}  // namespace gpudoctor
