#include "common/numeric_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace gpudoctor {
namespace {

TEST(NumericCheck, DecodesFormatsExactly) {
  EXPECT_EQ(bf16ToDouble(0x3f80), 1.0);
  EXPECT_EQ(bf16ToDouble(0xc040), -3.0);
  EXPECT_EQ(fp16ToDouble(0x3c00), 1.0);
  EXPECT_EQ(fp16ToDouble(0x0001), std::ldexp(1.0, -24));  // smallest subnormal
  EXPECT_EQ(fp16ToDouble(0x7bff), 65504.0);
  EXPECT_EQ(fp8e4m3ToDouble(0x38), 1.0);                  // 0.0111.000
  EXPECT_EQ(fp8e4m3ToDouble(0x7e), 448.0);                // largest finite
  EXPECT_EQ(fp8e4m3ToDouble(0x01), std::ldexp(1.0, -9));  // smallest subnormal
  EXPECT_EQ(fp8e4m3ToDouble(0xb8), -1.0);
  EXPECT_TRUE(std::isnan(fp8e4m3ToDouble(0x7f)));
}

TEST(NumericCheck, Bf16RoundsToNearestEven) {
  EXPECT_EQ(doubleToBf16(1.0), 0x3f80);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1.0).
  EXPECT_EQ(doubleToBf16(1.0 + std::ldexp(1.0, -8)), 0x3f80);
  EXPECT_EQ(doubleToBf16(1.0 + 3 * std::ldexp(1.0, -8)), 0x3f82);
  EXPECT_EQ(bf16ToDouble(doubleToBf16(-2.5)), -2.5);
  EXPECT_TRUE(std::isnan(bf16ToDouble(doubleToBf16(NAN))));
}

TEST(NumericCheck, PoisonIsNonFiniteInEveryFormat) {
  for (NumFormat f : {NumFormat::kFp32, NumFormat::kFp16, NumFormat::kBf16, NumFormat::kFp8E4M3}) {
    uint8_t buf[8] = {};
    uint32_t bits = poisonBits(f);
    std::memcpy(buf, &bits, static_cast<size_t>(formatBytes(f)));  // little endian
    EXPECT_TRUE(isNonFinite(f, buf, 0)) << static_cast<int>(f);
    EXPECT_TRUE(std::isnan(decodeElement(f, buf, 0))) << static_cast<int>(f);
    uint8_t zero[8] = {};
    EXPECT_FALSE(isNonFinite(f, zero, 0));
  }
}

TEST(NumericCheck, ErrorStatsCountAndPass) {
  ErrorStats s;
  addError(s, 1.0, 1.0, 1e-3);
  addError(s, 2.0005, 2.0, 1e-3);
  EXPECT_TRUE(s.passed());
  EXPECT_NEAR(s.worst_ratio, 0.5, 1e-9);
  addError(s, NAN, 1.0, 1e-3);
  EXPECT_EQ(s.non_finite, 1);
  EXPECT_FALSE(s.passed());
  ErrorStats t;
  addError(t, 1.1, 1.0, 0.05);
  EXPECT_EQ(t.over_tolerance, 1);
  EXPECT_FALSE(t.passed());
  EXPECT_NEAR(t.relL2(), 0.1, 1e-12);
  EXPECT_FALSE(ErrorStats{}.passed());  // nothing checked is no pass
}

TEST(NumericCheck, GemmToleranceSeparatesRoundingFromBugs) {
  // bf16 output of k = 4096 products: rounding the output (at most 2^-8 relative) passes ...
  GemmTolerance t = gemmTolerance(NumFormat::kBf16, false, NumFormat::kBf16, 4096);
  double ref = 10.0, absdot = 1000.0;
  double rounded = bf16ToDouble(doubleToBf16(ref + 0.03));
  EXPECT_LE(std::fabs(rounded - ref), gemmBound(t, ref, absdot));
  // ... a missing product term of typical size (|a b| ~ absdot / k) does not, once bf16 rounding is small.
  GemmTolerance f32 = gemmTolerance(NumFormat::kFp32, false, NumFormat::kFp32, 4096);
  EXPECT_GT(absdot / 4096, gemmBound(f32, ref, absdot));
  // TF32 rounds its inputs: a looser bound than FP32; FP8 accumulates coarser than BF16.
  EXPECT_GT(gemmTolerance(NumFormat::kFp32, true, NumFormat::kFp32, 4096).absdot_rel, f32.absdot_rel);
  GemmTolerance f8 = gemmTolerance(NumFormat::kFp8E4M3, false, NumFormat::kBf16, 4096);
  EXPECT_GT(f8.absdot_rel, t.absdot_rel);
  // Still tight enough that a zeroed output of typical size fails: |ref| ~ sqrt(k / 9) for uniform
  // [-1, 1) inputs, sum |a b| ~ k / 4.
  double typical_ref = std::sqrt(4096 / 9.0), typical_absdot = 4096 / 4.0;
  EXPECT_GT(typical_ref, 5 * gemmBound(f8, typical_ref, typical_absdot));
  EXPECT_GT(typical_ref,
            5 * gemmBound(gemmTolerance(NumFormat::kFp32, true, NumFormat::kFp32, 4096), typical_ref, typical_absdot));
}

TEST(NumericCheck, AttentionBoundRejectsZerosAcceptsBf16Rounding) {
  double rms = 0.01, ref = 0.012;
  EXPECT_LE(std::fabs(bf16ToDouble(doubleToBf16(ref)) - ref), attentionBound(ref, rms));
  EXPECT_GT(std::fabs(0.0 - ref), attentionBound(ref, rms));  // an unwritten or zeroed output fails
}

TEST(NumericCheck, UniformIsExactInFp32AndFresh) {
  for (uint64_t i = 0; i < 1000; ++i) {
    double v = uniformAt(42, i, 2.0);
    EXPECT_GE(v, -2.0);
    EXPECT_LT(v, 2.0);
    EXPECT_EQ(static_cast<double>(static_cast<float>(v)), v);
  }
  EXPECT_NE(uniformAt(1, 0, 1.0), uniformAt(2, 0, 1.0));
  EXPECT_NE(mixBits(7, 0), mixBits(7, 1));
}

TEST(NumericCheck, Median) {
  EXPECT_EQ(median({}), 0);
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
}

}  // namespace
}  // namespace gpudoctor
