// Renders `bench io` results: the terminal table (warm and cold side by side, like nccl-tests' table
// every user can read) and JSON with every figure. Computes nothing.
#pragma once
#include <string>

#include "diagnosis/io_advice.h"
#include "model/io_bench.h"

namespace gpudoctor {

// The terminal report; `advice` may be null when no target rate was given.
std::string renderIoBenchText(const StorageBenchResult& r, const IoAdvice* advice);
// Every figure as JSON (bytes, seconds, GB/s = 1e9 bytes/s).
std::string renderIoBenchJson(const StorageBenchResult& r, const IoAdvice* advice);

}  // namespace gpudoctor
