// The one finding type every judge produces (trace rules, NCCL log checks): what limits the job, by
// how much fixing it can help, the evidence and the concrete change; and the checklist's items.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpudoctor {

enum class Severity { kCritical, kWarning, kInfo, kOk };
// "critical", "warning", "info", "ok".
std::string_view severityName(Severity s);

// One number a finding rests on.
struct Evidence {
  std::string name;
  double value = 0;
  std::string unit;  // "ms/step", "%", "us", "count", "GB/s", "bytes"
};

// What the fix buys, predicted by replaying the trace with the fix as an edit (diagnosis/what_if).
struct FixPrediction {
  bool available = false;
  int64_t step_ns = 0;          // the un-profiled step after this fix alone
  double speedup = 0;           // the un-profiled step now / after the fix
  std::string next_bottleneck;  // the ranking's category that leads the replayed step after the fix
  // The steady state's parts after the fix (steady_state.h): the host's step and the GPU's busy time
  // per step, ns. The step is the largest of them (and of the loader's period, where it has one).
  int64_t host_ns = 0, gpu_busy_ns = 0;
  std::string basis;  // how the edit was made
  // Other ways to apply the fix, each replayed on its own (cuda_graphs: "cuda_graphs_model", the model
  // alone graphed by torch.compile's reduce-overhead mode, the optimizer step eager; loader_workers:
  // "loader_workers_x4", 4x the workers of a pool that sets the step).
  struct Alternative {
    std::string fix;
    int64_t step_ns = 0;
    double speedup = 0;
    std::string next_bottleneck;
  };
  std::vector<Alternative> alternatives;
};

struct Finding {
  std::string id;     // stable "category.name": "bottleneck.communication", "precision.fp32_gemm", ...
  std::string title;  // one line
  Severity severity = Severity::kInfo;
  std::vector<Evidence> evidence;
  double gain_ms_per_step = 0;  // upper bound of step time saved
  double gain_share = 0;        // the same as a share of the step
  std::string gain_basis;       // how the bound was estimated
  // The gain is an estimate, not an upper bound: what it rests on is not identified in the trace (a
  // DataLoader pool's period where only one fetch of the steps waited). No prediction is held to it.
  bool gain_is_estimate = false;
  // Where the bound is the step less a floor no version of the fix can take it below (a DataLoader
  // pool's: the largest of the host's, the GPU's and the busiest stream's periods), that floor in ms; 0:
  // none. The floor holds whatever the step's estimate; the saving is bounded on the estimated step.
  double floor_step_ms = 0;
  std::string explanation;       // why, in a sentence or two
  std::vector<std::string> fix;  // concrete code or env lines
  FixPrediction what_if;         // where the replay can edit the fix
};

enum class CheckStatus { kPass, kFail, kUnknown };
// "pass", "fail", "not measurable".
std::string_view checkStatusName(CheckStatus s);

struct ChecklistItem {
  std::string area;  // compute, communication, io, memory, monitoring
  std::string item;
  CheckStatus status = CheckStatus::kUnknown;
  std::string evidence;
};

}  // namespace gpudoctor
