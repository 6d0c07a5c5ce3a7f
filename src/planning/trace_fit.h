// The plan of a job that was profiled: which configuration the traces show (data parallelism, ZeRO
// stage, accumulation, recomputation, precision, GPU count), which the flags pin, and which neither
// tells, so that `plan --from-trace` compares its prediction with the job that ran and says what it
// assumed. Pure: the caller reads the traces and fills TracedJob.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "planning/plan.h"

namespace gpudoctor {

// What a profiled run shows of its configuration; unknown fields stay empty or nullopt.
struct TracedJob {
  int world = 0;                      // the job's ranks (0: unknown)
  std::string data_parallel;          // "ddp", "zero" (DeepSpeed), "fsdp", "none"; empty: unknown
  std::optional<int> accumulation;    // backward passes per optimizer step
  std::optional<bool> checkpointing;  // activation checkpointing (recomputation in backward)
  std::optional<bool> autocast;       // torch.autocast re-dispatched the matrix work
  std::string precision;              // of the matrix work: "bf16", "fp16", "fp32", "tf32", "mixed"; empty: unknown
};

// What the user gave: pins (-1 / unset where not given) and whether the batch, the GPU count and
// the precision came from a flag or the config file.
struct GivenSettings {
  SearchPins pins;
  bool global_batch = false, gpus = false, precision = false;
};

// One setting of the compared configuration, its value and where it came from.
struct Assumption {
  std::string setting;   // "ZeRO stage"
  std::string value;     // "0"
  std::string source;    // "--zero", "the trace: DistributedDataParallel", "assumed: ..."
  bool guessed = false;  // neither a flag nor the trace: the planner's or the default's choice
};

// The configuration to compare with the traces: flags first, then what the trace shows.
struct TraceFit {
  SearchPins pins;
  std::optional<int> gpus;             // the GPU count from the trace, where no flag gave one
  std::optional<Precision> precision;  // from the trace, where no flag gave one
  std::vector<std::string> notes;      // what the trace shows that the planner cannot represent
  // Where each setting came from, filled by fitTrace; values come with describeFit.
  std::string tp_from, pp_from, zero_from, recompute_from, micro_from, batch_from, gpus_from, precision_from;
};

// Pins for the traced job. `global_batch` is the batch the plan uses (given or default), `gpus`
// the plan's GPU count (ignored where the trace gives it and no flag did).
TraceFit fitTrace(const TracedJob& job, const GivenSettings& given, int64_t global_batch, int gpus);

// The settings of `chosen` with their sources, in the order plan prints them.
std::vector<Assumption> describeFit(const TraceFit& fit, const PlanResult& chosen, const TrainSpec& t,
                                    const ClusterSpec& k);

// The efficiencies `plan --efficiency` accepts (a fraction of peak): advice stays inside them.
inline constexpr double kMinEfficiency = 0.01, kMaxEfficiency = 1.0;

}  // namespace gpudoctor
