#include "model/ceilings.h"

namespace gpudoctor {

std::string_view gemmPrecisionName(GemmPrecision p) {
  switch (p) {
    case GemmPrecision::kFp32:
      return "fp32";
    case GemmPrecision::kTf32:
      return "tf32";
    case GemmPrecision::kFp16:
      return "fp16";
    case GemmPrecision::kBf16:
      return "bf16";
    case GemmPrecision::kFp8:
      return "fp8";
  }
  return "?";
}

std::optional<GemmPrecision> gemmPrecisionFromName(std::string_view name) {
  for (int i = 0; i < kGemmPrecisionCount; ++i)
    if (gemmPrecisionName(static_cast<GemmPrecision>(i)) == name) return static_cast<GemmPrecision>(i);
  return std::nullopt;
}

std::optional<Ceilings> datasheetCeilings(std::string_view name) {
  // NVIDIA H100 / H200 SXM datasheets: FP32 67, TF32 494.5, FP16/BF16 989.5, FP8 1979 TFLOP/s dense
  // (the datasheets print the sparse figures, twice these); HBM3 3.35 TB/s (H100), HBM3e 4.8 TB/s (H200).
  bool h200 = name.find("H200") != std::string_view::npos;
  bool h100 = name.find("H100") != std::string_view::npos;
  if (!h200 && !h100) return std::nullopt;
  if (name.find("PCIe") != std::string_view::npos || name.find("NVL") != std::string_view::npos) return std::nullopt;
  Ceilings c;
  c.device = h200 ? "NVIDIA H200 SXM (datasheet)" : "NVIDIA H100 SXM (datasheet)";
  c.source = "datasheet";
  c.tflops = {67.0, 494.5, 989.5, 989.5, 1979.0};
  double hbm = h200 ? 4800 : 3350;
  c.hbm_copy_gbps = c.hbm_read_gbps = c.hbm_write_gbps = hbm;
  c.h2d_pinned_gbps = c.h2d_pageable_gbps = c.d2h_pinned_gbps = c.d2h_pageable_gbps = 64;
  c.p2p_gbps = 450;
  return c;
}

std::optional<Ceilings> builtinCeilings(std::string_view name) {
  auto c = datasheetCeilings(name);
  if (!c || name.find("H200") == std::string_view::npos) return c;
  c->device = "NVIDIA H200 SXM (measured by gpudoctor bench gpu, 2026-11-30)";
  c->source = "gpudoctor bench gpu";
  c->tflops = {51.8, 412.7, 769.6, 798.1, 1477.3};
  c->hbm_read_gbps = 4422;
  c->hbm_copy_gbps = 3919;
  c->hbm_write_gbps = 0;  // not in this summary: unknown
  c->h2d_pinned_gbps = 55.5;
  c->h2d_pageable_gbps = 7.4;
  c->d2h_pinned_gbps = 55.2;
  c->d2h_pageable_gbps = 11.5;
  c->p2p_gbps = 393;
  return c;
}

}  // namespace gpudoctor
