// Fix `pad_gemm_dims`: its measured constants (used by its edit, by the gemm.misaligned rule's bound and
// by tests).
#pragma once
#include <array>

namespace gpudoctor {

// A tensor-core GEMM whose dimension is not a multiple of 8 (16-bit) runs on fallback kernels aligned
// to 2 or 4 bytes; padded to a multiple of 64 it runs on the aligned ones in this share of the time,
// by operand alignment (misalignedGemmIndex: 2, 4, 8 bytes). From the lab's fit jobs' bf16 traces
// (H200, torch 2.11, validation/): the LM heads' GEMMs against the same trace's aligned GEMMs, both
// at the FLOPs of the job's known shapes: GPT-2's and RoBERTa's vocabularies (50257, 50265: align1,
// cutlass_75_tensorop_bf16_s1688gemm) ran at 120 TFLOP/s where their layers' GEMMs ran at 644 and
// 613 (0.19, 0.20); BERT's (30522: align2, cutlass_80_tensorop_bf16_s16816gemm) at 240 against 578
// (0.41). 8 bytes is not measured: the 4-byte share, never faster than that.
inline constexpr std::array<double, 3> kPaddedGemmShare = {0.19, 0.41, 0.41};

}  // namespace gpudoctor
