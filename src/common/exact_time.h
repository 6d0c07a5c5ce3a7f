// Exact conversion of JSON number tokens holding microseconds (Kineto's `ts`/`dur`, with or
// without a fraction) into integer nanoseconds, without a detour through double: a double loses
// the nanosecond digit of a 16-digit timestamp, and interval arithmetic must be exact.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace gpudoctor {

// Parses a decimal token in microseconds ("5132713580509.403", "12", "-1.5", "1.2e3") into
// nanoseconds, rounding half away from zero beyond the third decimal. Returns nullopt for text
// that is not a number or does not fit in int64 nanoseconds.
std::optional<int64_t> parseMicrosToNanos(std::string_view token);

// Parses a decimal integer token (no fraction, no exponent); nullopt otherwise.
std::optional<int64_t> parseInt64(std::string_view token);

}  // namespace gpudoctor
