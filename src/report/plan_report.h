// Rendering of planner results: the best configurations with memory breakdown, step time, tokens/s,
// MFU and the framework flags that express them; JSON. Computes nothing.
#pragma once
#include <string>
#include <vector>

#include "analysis/run_analysis.h"
#include "planning/plan.h"

namespace gpudoctor {

std::string renderPlanText(const ModelSpec& m, const ClusterSpec& k, const TrainSpec& t,
                           const std::vector<PlanResult>& plans, size_t top);
std::string renderPlanJson(const ModelSpec& m, const ClusterSpec& k, const TrainSpec& t,
                           const std::vector<PlanResult>& plans, size_t top);
// Predicted vs measured step for one configuration, with the difference explained by category.
std::string renderPlanVsTrace(const ModelSpec& m, const ClusterSpec& k, const TrainSpec& t, const PlanResult& p,
                              const RunAnalysis& run);
// The framework settings for one configuration (Megatron-style flags, DeepSpeed / FSDP hints).
std::vector<std::string> planSettings(const ModelSpec& m, const TrainSpec& t, const ParallelConfig& c);

}  // namespace gpudoctor
