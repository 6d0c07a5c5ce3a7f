// Checking a GPU kernel's output on the host: number formats (bf16, fp16, fp8 e4m3) decoded exactly,
// error metrics against an FP64 reference, the tolerance each precision can promise, and the poison
// patterns that prove every output element was written. Plain C++ so it is tested without a GPU.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gpudoctor {

// Storage formats the GPU benchmarks produce and consume.
enum class NumFormat : uint8_t { kFp32, kFp16, kBf16, kFp8E4M3 };

// Bytes per element of a format.
int formatBytes(NumFormat f);
// Exact value of a bf16 bit pattern.
double bf16ToDouble(uint16_t bits);
// bf16 nearest to v (round to nearest even; NaN stays NaN).
uint16_t doubleToBf16(double v);
// Exact value of an IEEE half bit pattern.
double fp16ToDouble(uint16_t bits);
// Exact value of an OCP fp8 e4m3 (fn: no infinities, 0x7f/0xff NaN) bit pattern.
double fp8e4m3ToDouble(uint8_t bits);
// Value of element i of a buffer in format f.
double decodeElement(NumFormat f, const void* data, size_t i);

// Poison written over outputs before a checked run: a NaN in every format, so an element the
// kernel never wrote reads back as non-finite and is counted.
uint32_t poisonBits(NumFormat f);
// True when the element's bits are NaN or infinity.
bool isNonFinite(NumFormat f, const void* data, size_t i);

// Unit roundoff (half an ulp at 1) of a format's significand: 2^-24 fp32, 2^-11 fp16 and TF32 inputs,
// 2^-8 bf16, 2^-4 fp8 e4m3.
double unitRoundoff(NumFormat f);

// Comparison of sampled outputs against an FP64 reference.
struct ErrorStats {
  int64_t checked = 0;         // elements compared
  int64_t non_finite = 0;      // NaN/inf in the output (unwritten or broken)
  int64_t over_tolerance = 0;  // |out - ref| > bound of that element
  double max_abs_err = 0;
  double sum_sq_err = 0, sum_sq_ref = 0;
  double worst_ratio = 0;  // max |out - ref| / bound: <= 1 passes
  // Relative L2 error ||out - ref|| / ||ref|| over the checked elements.
  double relL2() const;
  // True when something was checked and nothing was non-finite or over tolerance.
  bool passed() const { return checked > 0 && non_finite == 0 && over_tolerance == 0; }
  // One line: "256 checked, max rel 1.2e-3, rel L2 4e-4, worst 0.31 of the bound".
  std::string summary() const;
};
// Adds one element: its output, FP64 reference and the absolute bound it must stay within.
void addError(ErrorStats& s, double out, double ref, double bound);

// Error bound of one GEMM output element: the output's rounding plus the inputs' rounding inside
// the multiply (TF32) plus fp32 accumulation over k terms, as a multiple of sum |a_l b_l|.
struct GemmTolerance {
  double out_rel = 0;     // times |ref|
  double absdot_rel = 0;  // times sum_l |a_l * b_l|
};
// The bound for a GEMM whose inputs are stored in `in` (tf32: inputs fp32 rounded to TF32 inside),
// accumulating k products in fp32 (fp8 on Hopper: reduced-precision accumulation), output in `out`.
GemmTolerance gemmTolerance(NumFormat in, bool tf32, NumFormat out, int64_t k);
// Absolute bound for an element with reference ref and sum of |products| absdot.
double gemmBound(const GemmTolerance& t, double ref, double absdot);

// bf16 attention output against FP64 softmax(QK^T·scale)V: the bound per element is
// 2^-7 · (|ref| + rms of the checked reference): bf16 output rounding (at most 2^-8 |ref|) and P
// rounded to bf16 before P·V stay inside; an output of zeros or of the wrong rows does not (long sequences
// average V, so an absolute bound in units of |V| would pass anything).
double attentionBound(double ref, double rms_ref);

// A hash-based random number the device kernels compute identically (splitmix64 of seed + index),
// so the host can regenerate any input element without copying it back.
uint64_t mixBits(uint64_t seed, uint64_t index);
// Uniform in [-r, r) from the top 24 bits of mixBits; exact in fp32 for r a power of two, so a
// device computing it in float gets the same value.
double uniformAt(uint64_t seed, uint64_t index, double r);

// Median of a sample (sorted copy); 0 when empty.
double median(std::vector<double> v);

}  // namespace gpudoctor
