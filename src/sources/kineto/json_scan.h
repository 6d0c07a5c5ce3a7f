// Finding where a JSON value ends without parsing it, so the reader can cut a stream of trace
// events into complete pieces for simdjson. String-aware: braces inside kernel names such as
// `{lambda(int)#1}` do not count.
#pragma once
#include <cstddef>

namespace gpudoctor {

inline constexpr size_t kNoEnd = static_cast<size_t>(-1);

// buf[pos] must be '{' or '['. Returns one past the matching close, or kNoEnd when buf[0, len)
// ends first. Mismatched kinds of brackets are not diagnosed here (the JSON parser does that).
size_t findCompositeEnd(const char* buf, size_t pos, size_t len);

// buf[pos] must be '"'. Returns one past the closing quote, or kNoEnd.
size_t findStringEnd(const char* buf, size_t pos, size_t len);

// Any JSON value at buf[pos]: composite, string or a literal (number, true, false, null).
// Literals end at a delimiter; a literal that reaches len returns kNoEnd unless at_eof.
size_t findValueEnd(const char* buf, size_t pos, size_t len, bool at_eof);

}  // namespace gpudoctor
