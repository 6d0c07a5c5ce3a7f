// The one --json convention of every verb: `--json FILE` writes the verb's JSON document
// to FILE (atomically: the file is complete or absent) and the terminal keeps its text; `--json -`
// writes only the JSON, on stdout. Every document has "tool" and "schema_version" and is described
// by docs/schemas/<document>.schema.json (scripts/check_json_schemas.sh validates them).
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "model/rank_digest.h"

namespace gpudoctor::cli {

// Adds --json FILE|- to `cmd`; `what` says what the document holds (for --help).
CLI::Option* addJsonOption(CLI::App* cmd, std::string* target, const std::string& what);

// True when the JSON replaces the text on stdout (`--json -`).
inline bool jsonOnly(const std::string& target) { return target == "-"; }

// Writes a document (JSON, HTML) to the target: stdout for "-", else FILE atomically. Returns ""
// or the error.
std::string writeDocument(const std::string& target, const std::string& text);

// Writes `json` to the target (when there is one) and `text` to stdout (unless --json -). Returns
// "" or the one-line error.
std::string writeOutputs(const std::string& target, const std::string& text, const std::string& json);

// Writes the rank summaries (sources/summary) to FILE atomically, or to stdout for "-". Returns ""
// or the error.
std::string writeSummary(const std::string& target, const std::vector<RankDigest>& digests);

}  // namespace gpudoctor::cli
