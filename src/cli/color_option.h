// --color=auto|always|never, one option for the verbs that print reports, and what it decides.
// auto: colour only when stdout is a terminal whose TERM is set and not "dumb", and NO_COLOR is unset
// or empty (https://no-color.org); always and never decide alone (a flag given on the command line
// overrides the environment, as no-color.org asks).
#pragma once
#include <CLI/CLI.hpp>
#include <string>

namespace gpudoctor::cli {

// Adds --color WHEN to `cmd` (default auto); `mode` receives the word.
CLI::Option* addColorOption(CLI::App* cmd, std::string* mode);

// True when the report on stdout gets ANSI colour under `mode` in this process's environment.
bool colorForStdout(const std::string& mode);

}  // namespace gpudoctor::cli
