// Turns analysis results into findings: what limits the step, by how much fixing it can help
// (an upper bound, with how it was estimated), and the concrete change. Also the guide's
// checklist with a status and evidence per item. Pure: no I/O.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/run_analysis.h"
#include "diagnosis/nccl_env_check.h"
#include "diagnosis/thresholds.h"

namespace gpudoctor {

enum class Severity { kCritical, kWarning, kInfo, kOk };
struct NcclLogFinding;  // diagnosis/nccl_log_check.h
std::string_view severityName(Severity s);

// One number a finding rests on.
struct Evidence {
  std::string name;
  double value = 0;
  std::string unit;  // "ms/step", "%", "us", "count", "GB/s", "bytes"
};

struct Finding {
  std::string id;        // stable: "bottleneck.communication", "precision.fp32_gemm", ...
  std::string title;     // one line
  Severity severity = Severity::kInfo;
  std::vector<Evidence> evidence;
  double gain_ms_per_step = 0;  // upper bound of step time saved
  double gain_share = 0;        // the same as a share of the step
  std::string gain_basis;       // how the bound was estimated
  std::string explanation;      // why, in a sentence or two
  std::vector<std::string> fix; // concrete code or env lines
};

// One bottleneck category and its share of the step.
struct BottleneckShare {
  std::string category;  // compute, communication, host_launch, input, sync, other_idle, copies
  double share = 0;
  double ms_per_step = 0;
};

enum class CheckStatus { kPass, kFail, kUnknown };
std::string_view checkStatusName(CheckStatus s);

struct ChecklistItem {
  std::string area;  // compute, communication, io, memory, monitoring
  std::string item;
  CheckStatus status = CheckStatus::kUnknown;
  std::string evidence;
};

struct Diagnosis {
  std::string primary;                    // category of the largest share
  std::vector<BottleneckShare> ranking;   // by share, largest first
  double step_ms = 0;                     // mean step wall time over ranks and steps
  std::vector<Finding> findings;          // by estimated gain, largest first; then severity
  std::vector<ChecklistItem> checklist;
};

// Other evidence a diagnosis can use when the user provides it.
struct DiagnosisInputs {
  const std::vector<EnvFinding>* nccl_env = nullptr;  // `nccl env` verdicts on the job's settings
  const std::vector<NcclLogFinding>* nccl_log = nullptr;  // what the job's NCCL INFO logs reveal
};

// Judges a run against the thresholds.
Diagnosis diagnose(const RunAnalysis& run, const Thresholds& th, const DiagnosisInputs& in = {});

}  // namespace gpudoctor
