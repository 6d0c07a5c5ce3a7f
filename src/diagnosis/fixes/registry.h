// The fixes the what-if can apply, one line per fix. Adding a fix is its file
// (diagnosis/fixes/<id>.cc defining `const Fix& <name>Fix()`), its test and one line here.
#pragma once
#include <string_view>
#include <vector>

#include "diagnosis/fixes/fix.h"

#define GPUDOCTOR_FIXES(X)                                                         \
  X(bf16)                 /* precision.fp32_gemm */                                \
  X(sdpa)                 /* attention.materialized */                             \
  X(padGemmDims)          /* gemm.misaligned */                                    \
  X(channelsLast)         /* layout.channels_last */                               \
  X(loaderWorkers)        /* input.loader_on_critical_path */                      \
  X(loaderWorkersX4)      /* loader_workers' alternative: 4x the pool's workers */ \
  X(hostWorkOffThread)    /* host.own_work */                                      \
  X(noHostSyncs)          /* sync.blocking */                                      \
  X(moeGroupedDispatch)   /* moe.per_expert_dispatch */                            \
  X(sparseEmbeddingGrads) /* embedding.dense_grads */                              \
  X(pinnedCopies)         /* input.pageable_copies */                              \
  X(cudaGraphs)           /* launch.overhead */                                    \
  X(cudaGraphsModel)      /* cuda_graphs' alternative: the model alone graphed */  \
  X(fusedOptimizer)       /* optimizer.unfused */                                  \
  X(stragglerAtMedian)    /* communication.straggler */                            \
  X(noCheckpointing)      /* memory.recomputation */                               \
  X(microBatch)           /* memory.accumulation */

namespace gpudoctor {

#define GPUDOCTOR_DECLARE_FIX(name) const Fix& name##Fix();
GPUDOCTOR_FIXES(GPUDOCTOR_DECLARE_FIX)
#undef GPUDOCTOR_DECLARE_FIX

// Every fix, in the order above.
const std::vector<const Fix*>& fixRegistry();
// The fix with this id; null for none.
const Fix* findFix(std::string_view id);
// The fix that answers a finding (the first listing it); null for none.
const Fix* fixAnswering(std::string_view finding_id);

}  // namespace gpudoctor
