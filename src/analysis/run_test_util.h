// For tests on real traces: read files (or directories of ranks) from the source tree and analyze
// them, keeping the traces alive beside the analysis that points into them.
#pragma once
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "analysis/run_analysis.h"
#include "sources/trace_set.h"

namespace gpudoctor::testing {

// A path in the source tree.
inline std::string srcPath(const std::string& rel) { return std::string(GPUDOCTOR_SOURCE_DIR) + "/" + rel; }

struct Loaded {
  std::vector<RankTrace> traces;
  RunAnalysis run;
};

// Reads and analyzes absolute paths (test failures, not crashes, when something does not read).
inline std::unique_ptr<Loaded> loadRun(const std::vector<std::string>& paths) {
  auto l = std::make_unique<Loaded>();
  auto files = expandTracePaths(paths);
  EXPECT_TRUE(files.ok());
  if (!files.ok()) return l;
  auto t = readTraceSet(files.value());
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().message);
  if (!t.ok()) return l;
  l->traces = std::move(t.value());
  auto r = analyzeRun(l->traces, {});
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  if (r.ok()) l->run = std::move(r.value());
  return l;
}

}  // namespace gpudoctor::testing
