// Advice that knows what the job already does: fix lines for a feature the job profile says is in
// use (CUDA graphs, torch.compile, a fused optimizer, loader workers, pinned memory, autocast, DDP
// advice on an FSDP job) are taken out of every finding and replaced by advice for the job as it is.
// Pure.
#pragma once
#include <vector>

#include "analysis/job_profile.h"
#include "diagnosis/finding.h"

namespace gpudoctor {

void respectJobProfile(const JobProfile& job, std::vector<Finding>& findings);

// Whether the step syncs on a data-dependent shape (boolean-mask indexing: aten::nonzero,
// masked_select, unique): CUDA graphs cannot capture it until that goes.
bool hasDataDependentShapes(const JobProfile& job);

// Whether `fix_line` advises a feature `job` already uses; `feature` gets its name.
bool advisesFeatureInUse(const JobProfile& job, const std::string& fix_line, std::string* feature = nullptr);

}  // namespace gpudoctor
