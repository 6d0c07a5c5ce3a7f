// Colour for the terminal reports: ANSI escapes put around finished text, so that a report's layout
// (widths, wrapping, alignment) is the plain text's, and the text with colour off is the same bytes
// as without this file. JSON and HTML never use it.
#pragma once
#include <string>
#include <string_view>

#include "diagnosis/finding.h"

namespace gpudoctor {

// What a piece of text says: a section heading (bold), a finding's severity (critical red, warning
// yellow, info dim), a good outcome (green).
enum class Tone { kHeading, kCritical, kWarning, kInfo, kGood };

// `text` in `tone` when `color`, else `text` unchanged.
std::string paint(std::string_view text, Tone tone, bool color);

// The first `n` characters of `text` painted, the rest (a table cell's padding) left plain.
std::string paintFront(std::string_view text, size_t n, Tone tone, bool color);

// The tone of a severity (ok: good).
Tone severityTone(Severity s);

}  // namespace gpudoctor
