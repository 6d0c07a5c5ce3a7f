// Reads a saved `gpudoctor analyze --json` document back as one side of `compare` (a baseline kept
// as one small file). Error (one line naming the file) for another tool's JSON, another version's
// layout, or a document without steps.
#pragma once
#include <string>

#include "common/result.h"
#include "model/run_summary.h"

namespace gpudoctor {

// True when the file's first bytes look like an analyze --json document ("tool": "gpudoctor analyze").
bool looksLikeAnalyzeJson(const std::string& path);

Result<RunSummary> readAnalyzeJson(const std::string& path);

}  // namespace gpudoctor
