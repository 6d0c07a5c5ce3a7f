// --help as a user reads it: every line within the terminal's width (at most 100 columns), option
// descriptions wrapped beside their names, value names without CLI11's type noise ("INT:INT in
// [1 - 100000]"), defaults in words, and two or three examples per verb.
#pragma once
#include <CLI/CLI.hpp>

namespace gpudoctor::cli {

// Installs the formatter on app (before its verbs are added: they inherit it) .
void useWrappedHelp(CLI::App& app);

// Gives every verb (and sub-verb) its examples as the help footer; call once all are added.
void addHelpExamples(CLI::App& app);

// The width reports are laid out in: COLUMNS when it holds a number, else the terminal's width when
// stdout is one, else 100 (a pipe or a file keeps the same layout everywhere).
size_t reportColumns();

}  // namespace gpudoctor::cli
