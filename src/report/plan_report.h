// Rendering of planner results: the best configurations with memory breakdown, step time, tokens/s,
// MFU and the framework flags that express them; JSON. Computes nothing.
#pragma once
#include <string>
#include <vector>

#include "analysis/run_analysis.h"
#include "planning/plan.h"
#include "planning/trace_fit.h"

namespace gpudoctor {

std::string renderPlanText(const ModelSpec& m, const ClusterSpec& k, const TrainSpec& t,
                           const std::vector<PlanResult>& plans, size_t top);
std::string renderPlanJson(const ModelSpec& m, const ClusterSpec& k, const TrainSpec& t,
                           const std::vector<PlanResult>& plans, size_t top);
// Predicted vs measured step for one configuration, with the difference explained by category:
// first the configuration's settings and where each came from (a flag, the trace, or assumed), the
// fit's notes, then the table and what to pass to plan (only values plan accepts).
std::string renderPlanVsTrace(const ModelSpec& m, const ClusterSpec& k, const TrainSpec& t, const PlanResult& p,
                              const RunAnalysis& run, const TraceFit& fit);
// The framework settings for one configuration (Megatron-style flags, DeepSpeed / FSDP hints).
std::vector<std::string> planSettings(const ModelSpec& m, const TrainSpec& t, const ParallelConfig& c);

}  // namespace gpudoctor
