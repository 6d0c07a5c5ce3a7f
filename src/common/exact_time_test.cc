#include "common/exact_time.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>

namespace gpudoctor {
namespace {

TEST(ParseMicrosToNanos, KeepsTheNanosecondDigitOfA16DigitTimestamp) {
  // A double has ~15.9 significant digits: this value would come back off by a nanosecond or more.
  EXPECT_EQ(parseMicrosToNanos("5132713580509.403"), std::optional<int64_t>(5132713580509403));
  EXPECT_EQ(parseMicrosToNanos("1700000000000000.001"), std::optional<int64_t>(1700000000000000001));
}

TEST(ParseMicrosToNanos, IntegersAndShortFractions) {
  EXPECT_EQ(parseMicrosToNanos("12"), std::optional<int64_t>(12000));
  EXPECT_EQ(parseMicrosToNanos("0"), std::optional<int64_t>(0));
  EXPECT_EQ(parseMicrosToNanos("1.5"), std::optional<int64_t>(1500));
  EXPECT_EQ(parseMicrosToNanos("1.05"), std::optional<int64_t>(1050));
  EXPECT_EQ(parseMicrosToNanos("1.123"), std::optional<int64_t>(1123));
  EXPECT_EQ(parseMicrosToNanos("-1.5"), std::optional<int64_t>(-1500));
  EXPECT_EQ(parseMicrosToNanos("-0"), std::optional<int64_t>(0));
}

TEST(ParseMicrosToNanos, RoundsHalfAwayFromZeroBeyondTheThirdDecimal) {
  EXPECT_EQ(parseMicrosToNanos("0.0005"), std::optional<int64_t>(1));
  EXPECT_EQ(parseMicrosToNanos("0.0004"), std::optional<int64_t>(0));
  EXPECT_EQ(parseMicrosToNanos("0.00049999"), std::optional<int64_t>(0));
  EXPECT_EQ(parseMicrosToNanos("-0.0005"), std::optional<int64_t>(-1));
  EXPECT_EQ(parseMicrosToNanos("-0.0004"), std::optional<int64_t>(0));
  EXPECT_EQ(parseMicrosToNanos("1.123456789"), std::optional<int64_t>(1123));
  // The carry runs through the fraction into the integer part.
  EXPECT_EQ(parseMicrosToNanos("1.9995"), std::optional<int64_t>(2000));
  EXPECT_EQ(parseMicrosToNanos("1.9994"), std::optional<int64_t>(1999));
}

TEST(ParseMicrosToNanos, ExponentForm) {
  EXPECT_EQ(parseMicrosToNanos("1.2e3"), std::optional<int64_t>(1200000));
  EXPECT_EQ(parseMicrosToNanos("1E3"), std::optional<int64_t>(1000000));
  EXPECT_EQ(parseMicrosToNanos("2e+2"), std::optional<int64_t>(200000));
  EXPECT_EQ(parseMicrosToNanos("-2e0"), std::optional<int64_t>(-2000));
  EXPECT_EQ(parseMicrosToNanos("5e-1"), std::optional<int64_t>(500));
  // Out of int64 nanoseconds, or an exponent without digits.
  EXPECT_EQ(parseMicrosToNanos("1e20"), std::nullopt);
  EXPECT_EQ(parseMicrosToNanos("1e"), std::nullopt);
  EXPECT_EQ(parseMicrosToNanos("1.5e"), std::nullopt);
  EXPECT_EQ(parseMicrosToNanos("1e3x"), std::nullopt);
}

TEST(ParseMicrosToNanos, RejectsWhatIsNotANumber) {
  for (const char* bad : {"", "abc", "1.", "--1", "1.2.3", "-", ".5", "+1", "1a", "0x10", " 1", "1 2", "nan", "inf"}) {
    EXPECT_EQ(parseMicrosToNanos(bad), std::nullopt) << "\"" << bad << "\"";
  }
}

TEST(ParseMicrosToNanos, RejectsValuesOutsideInt64Nanoseconds) {
  // 17 integer digits cannot fit once multiplied by 1000.
  EXPECT_EQ(parseMicrosToNanos("12345678901234567"), std::nullopt);
  EXPECT_EQ(parseMicrosToNanos("-12345678901234567"), std::nullopt);
  // 16 digits may or may not fit: the boundary is INT64_MAX nanoseconds exactly.
  EXPECT_EQ(parseMicrosToNanos("9223372036854775.807"), std::optional<int64_t>(std::numeric_limits<int64_t>::max()));
  EXPECT_EQ(parseMicrosToNanos("-9223372036854775.807"), std::optional<int64_t>(-std::numeric_limits<int64_t>::max()));
  EXPECT_EQ(parseMicrosToNanos("9223372036854775.808"), std::nullopt);
  EXPECT_EQ(parseMicrosToNanos("9223372036854775.8075"), std::nullopt);  // rounds up past the limit
  EXPECT_EQ(parseMicrosToNanos("9999999999999999"), std::nullopt);
}

TEST(ParseMicrosToNanos, AcceptsTrailingWhitespace) {
  // Tokens cut from JSON may keep the whitespace before the next delimiter.
  EXPECT_EQ(parseMicrosToNanos("12 "), std::optional<int64_t>(12000));
  EXPECT_EQ(parseMicrosToNanos("1.5\n"), std::optional<int64_t>(1500));
  EXPECT_EQ(parseMicrosToNanos("7\r\n\t "), std::optional<int64_t>(7000));
  EXPECT_EQ(parseMicrosToNanos("1.2e3 "), std::optional<int64_t>(1200000));
  EXPECT_EQ(parseMicrosToNanos("   "), std::nullopt);
}

TEST(ParseInt64, Basics) {
  EXPECT_EQ(parseInt64("42"), std::optional<int64_t>(42));
  EXPECT_EQ(parseInt64("0"), std::optional<int64_t>(0));
  EXPECT_EQ(parseInt64("-7"), std::optional<int64_t>(-7));
  EXPECT_EQ(parseInt64("12 \n"), std::optional<int64_t>(12));
  EXPECT_EQ(parseInt64("9223372036854775807"), std::optional<int64_t>(std::numeric_limits<int64_t>::max()));
  EXPECT_EQ(parseInt64("-9223372036854775808"), std::optional<int64_t>(std::numeric_limits<int64_t>::min()));
  EXPECT_EQ(parseInt64("9223372036854775808"), std::nullopt);
  for (const char* bad : {"", "1.5", "1e3", "abc", "4x", "+3", " 3", "--1", "-"}) {
    EXPECT_EQ(parseInt64(bad), std::nullopt) << "\"" << bad << "\"";
  }
}

}  // namespace
}  // namespace gpudoctor
