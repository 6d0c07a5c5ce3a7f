// What the verbs' option handling shares: validators whose messages are plain words (CLI11's
// PositiveNumber printed DBL_MAX as its bound), "did you mean" for an unknown option, the rule
// that one output at most goes to stdout ("-"), and the check that stdout took every byte.
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

namespace gpudoctor::cli {

// A number above 0; a number of 0 or more; a whole number of 0 or more.
CLI::Validator positive();
CLI::Validator nonNegative();
CLI::Validator wholeNumber();

// -q,--quiet, one meaning in every verb: only errors and the output asked for (the report, --json -,
// the files written); no progress, notes, summaries or live view.
CLI::Option* addQuiet(CLI::App* cmd, bool* quiet);

// "unknown option WORD", with the nearest option of `app` when one is close ("did you mean"); a
// short flag the verb gave up (it meant something else than the same letter elsewhere) names its
// long spelling.
std::string unknownOption(const CLI::App& app, const std::string& word);

// "" or the usage error when more than one of the outputs (flag, value) is "-" (stdout).
std::string oneStdout(const std::vector<std::pair<std::string, std::string>>& outputs);

// "" when stdout took everything written to it (flushed now); else the error line's message.
std::string stdoutError();

}  // namespace gpudoctor::cli
