// Small text helpers shared by the terminal renderers.
#pragma once
#include <string>

namespace gpudoctor {

// Wraps text at `width` columns; every line starts with `indent`.
std::string wrapText(const std::string& text, const std::string& indent, size_t width);

}  // namespace gpudoctor
