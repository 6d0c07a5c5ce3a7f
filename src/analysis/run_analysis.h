// The analyze verb's library entry: from RankTraces to every figure the reports show. Ranks are
// indexed and measured in parallel; nothing here prints or touches files.
#pragma once
#include <vector>

#include "analysis/breakdown.h"
#include "analysis/collectives.h"
#include "analysis/embedding_grads.h"
#include "analysis/host_work.h"
#include "analysis/job_profile.h"
#include "analysis/kernels.h"
#include "analysis/moe_dispatch.h"
#include "analysis/ranks.h"
#include "common/result.h"

namespace gpudoctor {

struct AnalysisOptions {
  StepSelection steps;
  size_t top_n = 10;
  unsigned threads = 0;              // 0: hardware concurrency
  double straggler_share_min = 0.6;  // see findStraggler (diagnosis sets both from its thresholds)
  double straggler_wait_min = 0.05;
  bool chosen_ranks = false;  // the traces are a few ranks chosen from the job's: no note names the others
};

struct RankAnalysis {
  const RankTrace* trace = nullptr;
  TraceIndex index;
  std::vector<StepWindow> windows;
  std::vector<StepBreakdown> steps;
  StepBreakdown total;  // sums over the selected steps (launch latency over all of them)
  KernelSummary kernels;
  std::vector<CollectiveStats> collectives;
  JobProfile job;                        // what this rank's job does (see job_profile.h)
  StepCoverage coverage;                 // GPU work outside the annotated steps
  CheckpointRegions checkpoint;          // activation checkpointing's re-run forward and wrapper (see profileRank)
  std::vector<CastSite> autocast_casts;  // where bf16 autocast would cast (see CastSite)
  HostWork host_work;                    // the host's own work (analysis/host_work.h)
  MoeDispatch moe;                       // per-expert MoE dispatch loops (analysis/moe_dispatch.h)
  EmbeddingGrads embedding;              // embedding tables' dense gradients (analysis/embedding_grads.h)
};

// A rank's trace that could not be analyzed (no GPU activity): reported, the others analyzed.
struct LeftOutRank {
  std::string path;
  int rank = -1;
  std::string reason;
};

struct RunAnalysis {
  std::vector<RankAnalysis> ranks;           // in rank order
  KernelSummary kernels;                     // all ranks
  std::vector<CollectiveStats> collectives;  // all ranks
  StragglerReport straggler;
  JobProfile job;                     // what the job does: the ranks' profiles merged, differences in job.notes
  std::vector<LeftOutRank> left_out;  // ranks not analyzed, in rank order
  // What the figures leave out or cut, one sentence each: ranks left out, steps clipped to the
  // recording, GPU work outside the annotated steps.
  std::vector<std::string> notes;
};

struct FleetReport;

// The straggler verdict of the cross-rank analyses (analysis/fleet): the process group whose
// straggler makes the others wait most, else the verdict that none has one. analyzeRun's verdict
// for a job of several process groups.
StragglerReport stragglerOfGroups(const FleetReport& f);

// Analyzes the traces (which must outlive the result). A rank without GPU activity is left out
// (left_out, notes) while others have some; Error when none has, or the step selection keeps nothing.
Result<RunAnalysis> analyzeRun(const std::vector<RankTrace>& traces, const AnalysisOptions& opt);

}  // namespace gpudoctor
