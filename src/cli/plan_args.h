// `gpudoctor plan`'s settings as parsed (flags, then the --config file), shared by the verb's files:
// the option table (plan_cmd.cc), the TOML file (plan_config.cc), and the comparison with a
// profiled run (plan_from_trace.cc).
#pragma once
#include <CLI/CLI.hpp>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "common/result.h"
#include "planning/plan.h"

namespace gpudoctor::cli {

struct PlanArgs {
  std::string model = "llama2-7b";
  int64_t layers = 0, hidden = 0, heads = 0, kv_heads = 0, ffn = 0, vocab = 0, seq = 0;
  std::string gpu = "h200";
  double gpu_memory_gb = 0, tflops = 0, efficiency = 0, intra_gbps = 0, inter_gbps = 0;
  int gpus_per_node = 8, nodes = 1;
  int64_t global_batch = 0, global_batch_tokens = 0;
  std::string precision = "bf16", optimizer = "adamw";
  bool no_flash = false, fp32_grads = false;
  double memory_limit = 0.95;
  int tp = -1, pp = -1, zero = -1;
  int64_t micro_batch = -1;
  std::string recompute;
  size_t top = 5;
  std::string json;
  std::vector<std::string> from_trace;
  std::string config;
  // The settings given on the command line or in the --config file, by flag name ("--precision"):
  // what --from-trace must not take from the trace.
  std::set<std::string> given;
  bool wasGiven(const std::string& flag) const { return given.count(flag) > 0; }
};

// The model, cluster, training and pins the settings describe.
struct PlanInputs {
  ModelSpec m;
  ClusterSpec c;
  TrainSpec t;
  SearchPins pins;
};

// Applies a TOML file of the same settings as the flags; flags given on the command line win.
// Unknown keys and wrong types are errors naming the key.
Status applyPlanConfig(const std::string& path, PlanArgs& a, const CLI::App& cmd);

// The inputs of the search; an Error is a usage error (an unknown preset, an impossible pin).
Result<PlanInputs> planInputs(const PlanArgs& a);

// `plan --from-trace`: the prediction for the traced job's configuration beside the measured run.
int runPlanFromTrace(const PlanArgs& a, PlanInputs in);

}  // namespace gpudoctor::cli
