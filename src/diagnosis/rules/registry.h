// The rules, in checklist order: one line per rule. Adding a rule is its file
// (diagnosis/rules/<name>.cc defining `const Rule& <name>Rule()`), its test and one line here.
#pragma once
#include <vector>

#include "diagnosis/rule.h"

#define GPUDOCTOR_RULES(X)                                                          \
  X(bottleneck)            /* headline: the largest category of the step */         \
  X(gpuUtilization)        /* checklist: GPU busy share */                          \
  X(fp32Gemm)              /* precision.fp32_gemm */                                \
  X(fp16GradScaler)        /* precision.fp16_gradscaler */                          \
  X(channelsLast)          /* layout.channels_last */                               \
  X(materializedAttention) /* attention.materialized */                             \
  X(misalignedGemms)       /* gemm.misaligned */                                    \
  X(launchOverhead)        /* launch.overhead */                                    \
  X(unfusedOptimizer)      /* optimizer.unfused */                                  \
  X(exposedCommunication)  /* communication.exposed */                              \
  X(fsdpCommunication)     /* communication.fsdp */                                 \
  X(straggler)             /* communication.straggler */                            \
  X(ncclSettings)          /* nccl.settings (with --nccl-env) */                    \
  X(ncclLog)               /* nccl.log (with --nccl-log) */                         \
  X(smallCollectives)      /* communication.small_collectives */                    \
  X(loader)                /* input.loader_on_critical_path, input.loader_hidden */ \
  X(loaderWorkers)         /* checklist: DataLoader workers */                      \
  X(pageableCopies)        /* input.pageable_copies */                              \
  X(blockingSync)          /* sync.blocking */                                      \
  X(moeDispatch)           /* moe.per_expert_dispatch */                            \
  X(denseEmbeddingGrads)   /* embedding.dense_grads */                              \
  X(hostOwnWork)           /* host.own_work */                                      \
  X(memoryPeak)            /* memory.peak */                                        \
  X(memoryPlanning)        /* checklist: checkpointing / accumulation */            \
  X(profilerOverhead)      /* profiler.overhead, checklist: monitoring */

namespace gpudoctor {

#define GPUDOCTOR_DECLARE_RULE(name) const Rule& name##Rule();
GPUDOCTOR_RULES(GPUDOCTOR_DECLARE_RULE)
#undef GPUDOCTOR_DECLARE_RULE

// Every rule, in the order above.
const std::vector<const Rule*>& ruleRegistry();
// The headline finding "bottleneck.<category>" (the bottleneck rule's, for the ranking's first
// category; the diagnosis re-heads with the category the replay finds limiting, `why` saying so).
Finding headlineFinding(const Facts& f, const Thresholds& th, const std::string& category, const std::string& why);
// The headline's category: the largest category of the largest group (Facts::groups).
std::string leadingCategory(const Facts& f);
// The thresholds every rule's findings share (gain → severity).
std::vector<const ThresholdDecl*> ruleCoreThresholds();

}  // namespace gpudoctor
