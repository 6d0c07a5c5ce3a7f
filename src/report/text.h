// Small text helpers shared by the terminal renderers.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace gpudoctor {

// The columns a report is laid out in: 100 unless set (the CLI sets the terminal's width, or COLUMNS,
// clamped to kMinTextWidth..kMaxTextWidth).
inline constexpr size_t kMinTextWidth = 80, kMaxTextWidth = 160;
size_t textWidth();
void setTextWidth(size_t columns);

// Wraps text at `width` columns; every line starts with `indent`.
std::string wrapText(const std::string& text, const std::string& indent, size_t width);
// `text` wrapped at the report width (textWidth): its first line led by `lead`, the others by `indent`
// (at least as long).
std::string wrapLed(const std::string& lead, const std::string& text, const std::string& indent);
// A heading wrapped to textWidth(), without the last newline (so a painted heading ends its escape
// on its own line).
std::string headingLines(const std::string& text);

// Every line of a finished report within `width` columns: a longer line is broken at spaces, prose
// with its indentation plus two, a shell command (kubectl, sbatch, srun, torchrun, an env assignment,
// a flag list as "Megatron: --tp ...") with " \" continuations so that it still pastes. A single word
// longer than the width is left whole.
std::string fitLines(const std::string& text, size_t width = textWidth());

// Fixes as a block that pastes: "fix:" alone on its line after `indent`, then each fix four columns
// further in. A line of code (a command or an assignment, as fitLines tells them) is kept whole; a line
// of prose becomes "# " comments wrapped at `width`.
std::string pasteBlock(const std::vector<std::string>& fixes, const std::string& indent, size_t width = textWidth());

}  // namespace gpudoctor
