// Fix `pad_gemm_dims`: its measured constants (used by its edit, by the gemm.misaligned rule's bound and
// by tests).
#pragma once
#include <array>

namespace gpudoctor {

// A tensor-core GEMM whose dimension is not a multiple of 8 (16-bit) runs on fallback kernels aligned
// to 2 or 4 bytes; padded to a multiple of 64 it runs on the aligned ones in this share of the time,
// by operand alignment (misalignedGemmIndex: 2, 4, 8 bytes). Measured without the profiler by
// validation/probes/misaligned_gemm_cost.py (H200, torch 2.11, bf16; an LM head's forward, input- and
// weight-gradient GEMMs at the odd size and padded, interleaved rounds;
// validation/results/h200_2026-12-05/probes/gemm_A.jsonl): vocabularies of 50257 and 50265 (2-byte
// alignment, cutlass_75_tensorop_bf16_s1688gemm_*_align1) over 4096-8192 tokens and hidden sizes of
// 768 and 1024: 0.153-0.166 of the time (0.13-0.20 per GEMM); 30522 (4-byte, cutlass_80_tensorop_bf16_
// s16816gemm_*_align2): 0.333 (0.32-0.34). 8 bytes is not measured: the 4-byte share, never faster.
inline constexpr std::array<double, 3> kPaddedGemmShare = {0.16, 0.33, 0.33};

}  // namespace gpudoctor
