// A process-wide pool of immutable text, for values thousands of digests share (a job profile, a
// kernel class name, a group description): each distinct text is stored once and lives until the
// process ends, so a std::string_view to it is safe to keep anywhere. Thread-safe.
#pragma once
#include <string_view>

namespace gpudoctor {

// The pooled copy of s (the same view for equal texts).
std::string_view internText(std::string_view s);

}  // namespace gpudoctor
