// Turns analysis results into findings: what limits the step, by how much fixing it can help
// (an upper bound, with how it was estimated), and the concrete change; and the guide's checklist
// with a status and evidence per item. Builds the Facts once and runs every rule of the registry
// (diagnosis/rules/). Pure: no I/O.
#pragma once
#include <utility>
#include <vector>

#include "analysis/run_analysis.h"
#include "diagnosis/facts.h"
#include "diagnosis/finding.h"
#include "diagnosis/thresholds.h"
#include "model/ceilings.h"

namespace gpudoctor {

// The replay of the traced step and the job as it runs un-profiled (diagnosis/what_if).
struct StepWhatIf {
  bool available = false;
  int64_t traced_step_ns = 0, replayed_step_ns = 0, unprofiled_step_ns = 0;
  std::string bottleneck;  // the ranking's category that leads the un-profiled replayed step
  // The traced step's parts (analysis/steady_state.h): the step is the largest of the host's step, the
  // GPU's, the busiest stream's work and the loader pool's period (0: not modeled); `bound` names
  // it ("host", "gpu", "gpu_busy", "loader"). The same for the un-profiled step.
  struct Parts {
    int64_t host_ns = 0, gpu_ns = 0, busy_ns = 0, loader_ns = 0;
    std::string bound;
  };
  Parts traced_parts, unprofiled_parts;
  // The step windows the replay covered, and the trace's (analysis/replay/replay.h kReplayMaxSteps).
  int64_t steps_replayed = 0, steps_in_trace = 0;
  // Where a DataLoader pool sets the un-profiled step but the steps do not give its period
  // (LoaderPool::periodIdentified): the step rests on the window's mean step. The fetches that
  // waited for their batch, and all fetches, in the replayed steps.
  bool pool_period_unidentified = false;
  int64_t pool_waited_fetches = 0, pool_fetches = 0;
  // The un-profiled step's critical path by category (ns per step; the parts add up to the step).
  std::vector<std::pair<std::string, double>> unprofiled_path;
  std::string basis;  // how, or why unavailable
  // With a step measured without the profiler (DiagnosisInputs::measured_step_ns): that step, the
  // factor on the estimated profiler cost that the replay needed to match it, and whether it did.
  int64_t measured_step_ns = 0;
  double profiler_cost_factor = 1;
  bool anchored = false;
  bool anchor_possible = true;  // false: the trace cannot give the measured step at all
  std::string anchor_note;      // where the replay could not match the measured step: why
};

// One fix of the plan: the fixes applied one after another, the one that gains most first; each
// step is the un-profiled step with this fix and all before it.
struct PlanAlternative {
  std::string finding, fix;
  int64_t step_ns = 0;  // after this fix in place of the step's, with the ones before it
  double speedup = 0;   // against the un-profiled step, cumulative
};

struct PlanStep {
  std::string finding;          // the finding's id
  std::string fix;              // the edit's name ("bf16", "cuda_graphs", ...)
  int64_t step_ns = 0;          // after this fix and the ones before it
  double speedup = 0;           // against the un-profiled step, cumulative
  std::string next_bottleneck;  // the category that leads afterwards
  // The other fixes that, in this one's place, the replay puts within kPlanTieShare of it: it
  // cannot order them (diagnosis/what_if.h), best first.
  std::vector<PlanAlternative> within_accuracy;
};

struct Diagnosis {
  std::string primary;                   // the largest category of the largest group; with the replay,
                                         // the one in that group whose fix buys most (else the critical
                                         // path's leader, if in that group)
  std::vector<BottleneckShare> ranking;  // by share, largest first
  std::vector<BottleneckShare> groups;   // the ranking grouped (compute, communication, copies, host)
  double step_ms = 0;                    // mean step wall time over ranks and steps
  std::vector<Finding> findings;         // the headline first; then by estimated gain, then severity
  std::vector<ChecklistItem> checklist;  // in registry order
  StepWhatIf what_if;                    // set by diagnose(run, ...)
  // The traced and un-profiled step alone (no fix): what compare judges, kept in every analyze
  // --json (also under --no-what-if: estimateStep) so a saved baseline compares as its trace does.
  StepWhatIf step_estimate;
  std::vector<PlanStep> plan;  // set by diagnose(run, ...); empty without the replay
};

// Judges facts against the thresholds with every registered rule.
Diagnosis diagnose(const Facts& facts, const Thresholds& th);

// Builds the facts of a run, judges them, and predicts what each editable fix buys (replay, with
// `ceilings` for the edits: the measured or built-in figures of the trace's GPU when null).
Diagnosis diagnose(const RunAnalysis& run, const Thresholds& th, const DiagnosisInputs& in = {},
                   const Ceilings* ceilings = nullptr);

// analyze's diagnosis of a run: diagnose(run, ...) above with the replay; without it (`what_if`
// false: --no-what-if) the rules alone, the what-if's basis saying so, and with `step_estimate` the
// step alone, unedited, so that a document written without the replay compares as its trace does.
struct DiagnoseRunOptions {
  bool what_if = true;
  bool step_estimate = false;
};
Diagnosis diagnoseRun(const RunAnalysis& run, const Thresholds& th, const DiagnosisInputs& in, const Ceilings* ceilings,
                      const DiagnoseRunOptions& opt);

// Sets the analysis options that rules' thresholds govern (the straggler cut-offs).
void configureAnalysis(const Thresholds& th, AnalysisOptions& opt);

}  // namespace gpudoctor
