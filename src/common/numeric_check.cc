#include "common/numeric_check.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

namespace gpudoctor {

int formatBytes(NumFormat f) {
  switch (f) {
    case NumFormat::kFp32:
      return 4;
    case NumFormat::kFp16:
    case NumFormat::kBf16:
      return 2;
    case NumFormat::kFp8E4M3:
      return 1;
  }
  return 0;
}

double bf16ToDouble(uint16_t bits) {
  uint32_t x = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

uint16_t doubleToBf16(double v) {
  float f = static_cast<float>(v);
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu)) return static_cast<uint16_t>((x >> 16) | 0x40);
  uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;  // round to nearest even on the 16 dropped bits
  return static_cast<uint16_t>(x >> 16);
}

double fp16ToDouble(uint16_t h) {
  int sign = (h & 0x8000) ? -1 : 1;
  int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0x1f) return mant ? std::nan("") : sign * INFINITY;
  if (exp == 0) return sign * std::ldexp(static_cast<double>(mant), -24);
  return sign * std::ldexp(static_cast<double>(mant | 0x400), exp - 25);
}

double fp8e4m3ToDouble(uint8_t b) {
  int sign = (b & 0x80) ? -1 : 1;
  int exp = (b >> 3) & 0xf, mant = b & 0x7;
  if (exp == 0xf && mant == 0x7) return std::nan("");
  if (exp == 0) return sign * std::ldexp(static_cast<double>(mant), -9);  // subnormal: mant * 2^-3 * 2^-6
  return sign * std::ldexp(static_cast<double>(mant | 0x8), exp - 10);    // 1.mmm * 2^(exp-7)
}

double decodeElement(NumFormat f, const void* data, size_t i) {
  switch (f) {
    case NumFormat::kFp32:
      return static_cast<const float*>(data)[i];
    case NumFormat::kFp16:
      return fp16ToDouble(static_cast<const uint16_t*>(data)[i]);
    case NumFormat::kBf16:
      return bf16ToDouble(static_cast<const uint16_t*>(data)[i]);
    case NumFormat::kFp8E4M3:
      return fp8e4m3ToDouble(static_cast<const uint8_t*>(data)[i]);
  }
  return 0;
}

uint32_t poisonBits(NumFormat f) {
  switch (f) {
    case NumFormat::kFp32:
      return 0x7fc0dead;  // quiet NaN with a recognizable payload
    case NumFormat::kFp16:
      return 0x7e5a;
    case NumFormat::kBf16:
      return 0x7fda;
    case NumFormat::kFp8E4M3:
      return 0x7f;
  }
  return 0;
}

bool isNonFinite(NumFormat f, const void* data, size_t i) {
  switch (f) {
    case NumFormat::kFp32: {
      uint32_t x;
      std::memcpy(&x, static_cast<const char*>(data) + 4 * i, 4);
      return (x & 0x7f800000u) == 0x7f800000u;
    }
    case NumFormat::kFp16:
      return (static_cast<const uint16_t*>(data)[i] & 0x7c00) == 0x7c00;
    case NumFormat::kBf16:
      return (static_cast<const uint16_t*>(data)[i] & 0x7f80) == 0x7f80;
    case NumFormat::kFp8E4M3:
      return (static_cast<const uint8_t*>(data)[i] & 0x7f) == 0x7f;
  }
  return true;
}

double unitRoundoff(NumFormat f) {
  switch (f) {
    case NumFormat::kFp32:
      return std::ldexp(1.0, -24);
    case NumFormat::kFp16:
      return std::ldexp(1.0, -11);
    case NumFormat::kBf16:
      return std::ldexp(1.0, -8);
    case NumFormat::kFp8E4M3:
      return std::ldexp(1.0, -4);
  }
  return 1;
}

double ErrorStats::relL2() const { return sum_sq_ref > 0 ? std::sqrt(sum_sq_err / sum_sq_ref) : 0; }

std::string ErrorStats::summary() const {
  return fmt::format(
      "{} checked, {} non-finite, {} over tolerance, max abs err {:.3g}, rel L2 {:.3g}, worst {:.2f} of the bound",
      checked, non_finite, over_tolerance, max_abs_err, relL2(), worst_ratio);
}

void addError(ErrorStats& s, double out, double ref, double bound) {
  ++s.checked;
  if (!std::isfinite(out)) {
    ++s.non_finite;
    return;
  }
  double e = std::fabs(out - ref);
  s.max_abs_err = std::max(s.max_abs_err, e);
  s.sum_sq_err += e * e;
  s.sum_sq_ref += ref * ref;
  double ratio = bound > 0 ? e / bound : (e > 0 ? INFINITY : 0);
  s.worst_ratio = std::max(s.worst_ratio, ratio);
  if (ratio > 1) ++s.over_tolerance;
}

GemmTolerance gemmTolerance(NumFormat in, bool tf32, NumFormat out, int64_t k) {
  GemmTolerance t;
  t.out_rel = unitRoundoff(out);
  // Inputs are generated in their storage format, so only TF32 rounds them again (both operands).
  double in_round = tf32 ? 2 * std::ldexp(1.0, -11) : 0;
  // fp32 accumulation: a probabilistic bound sqrt(k)·u with a factor 4 of margin (blocked and
  // split-k sums do better than the worst case k·u).
  t.absdot_rel = 2 * (in_round + 4 * std::sqrt(static_cast<double>(k)) * unitRoundoff(NumFormat::kFp32));
  // Hopper's fp8 MMAs keep about 14 significant bits in their partial sums until cuBLASLt promotes
  // them to fp32 (every few K blocks): 2^-10 of sum |a b| covers that with margin and still fails a
  // zeroed or misplaced output (|ref| is ~sqrt(k) times a product, sum |a b| ~k/4 of them).
  if (in == NumFormat::kFp8E4M3) t.absdot_rel += std::ldexp(1.0, -10);
  return t;
}

double gemmBound(const GemmTolerance& t, double ref, double absdot) {
  // Twice the output rounding: the reference is rounded to the output format on neither side.
  return 2 * t.out_rel * std::fabs(ref) + t.absdot_rel * absdot + 1e-30;
}

double attentionBound(double ref, double rms_ref) { return std::ldexp(1.0, -7) * (std::fabs(ref) + rms_ref); }

uint64_t mixBits(uint64_t seed, uint64_t index) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ull * (index + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double uniformAt(uint64_t seed, uint64_t index, double r) {
  double u = static_cast<double>(mixBits(seed, index) >> 40) * std::ldexp(1.0, -24);  // [0, 1), 24 bits
  return -r + 2 * r * u;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace gpudoctor
