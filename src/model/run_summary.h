// What `compare` needs of one run, from its traces (analysis/compare: summarizeRun) or from a saved
// `analyze --json` document (sources/analyze_json), so that a baseline can be kept as one small file
// and both give the same comparison.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpudoctor {

// One step of one rank: the breakdown's additive figures (ns), enough for the ranking's categories.
struct StepFigures {
  int64_t number = -1;  // ProfilerStep number (-1: the fallback window)
  int64_t wall = 0, compute = 0, comm_exposed = 0, copies = 0;
  int64_t idle_host = 0, idle_sync = 0, idle_dependency = 0, idle_other = 0;
  int64_t idle_host_loader = 0, idle_sync_loader = 0;  // the loader's part of host / sync idle
};

struct RankSummary {
  int rank = -1;
  std::string path;
  std::vector<StepFigures> steps;
};

// A kernel class, a kernel (of the top list) or a collective kind: calls and summed time over all
// selected steps and ranks.
struct TimeTotal {
  std::string name;  // class name, kernel name, or "allreduce BFloat16 4194304 B"
  std::string cls;   // kernels: their class
  std::string op;    // kernels: the operator (and input shapes) that launches them most; "" unknown
  int64_t count = 0;
  int64_t total_ns = 0;
};

// The name compare matches collectives by: "allreduce BFloat16 4194304 B", then " group NAME" when
// the process group is known (its name, else its rank list), the same from traces and saved JSON.
inline std::string collectiveKey(std::string_view collective, std::string_view dtype, int64_t bytes,
                                 std::string_view group) {
  std::string k = std::string(collective) + " " + std::string(dtype) + " " + std::to_string(bytes) + " B";
  if (!group.empty()) k += " group " + std::string(group);
  return k;
}

struct RunSummary {
  std::string source;  // the paths or the JSON file
  std::vector<RankSummary> ranks;
  std::vector<TimeTotal> classes, kernels, collectives;
  std::vector<std::pair<std::string, std::string>> job;  // the job profile's fields, as text
  double unprofiled_step_ns = -1;                        // the what-if's estimate; -1 unknown
  double traced_step_ns = -1;  // the traced steady-state step (analysis/steady_state.h); -1 unknown
  // Its critical path by category (ns per step, adding up to the estimate); empty: unknown.
  std::vector<std::pair<std::string, double>> unprofiled_path;
  // What tells one job from another: the GPU, the world size, the parameter tensors (0 / -1 / "":
  // unknown; CUDA graphs hide the parameters' gradient nodes).
  std::string gpu;
  int world_size = -1;
  double param_tensors = 0;
  int64_t steps() const {
    int64_t n = 0;
    for (const auto& r : ranks) n += static_cast<int64_t>(r.steps.size());
    return n;
  }
};

}  // namespace gpudoctor
