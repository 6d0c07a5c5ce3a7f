// Judging a job as what it is, from its job profile: an inference job (no backward pass, no
// optimizer step) gets no optimizer advice, no DataLoader advice unless it runs a DataLoader, and
// pinned buffers instead of the DataLoader's pin_memory; a trace that records a CUDA graph capture
// (a one-off) is not advised to capture graphs from its launches. Pure.
#pragma once
#include <string>
#include <vector>

#include "analysis/job_profile.h"
#include "diagnosis/finding.h"

namespace gpudoctor {

// Removes (or rewrites) the findings that do not fit the job's kind. Run before the replay, so that
// what is removed is neither predicted nor planned.
void fitJobKind(const JobProfile& job, std::vector<Finding>& findings);

// What the headline adds for the job's kind (what was left out and why); empty for a training job
// traced outside a graph capture.
std::string jobKindNote(const JobProfile& job);

}  // namespace gpudoctor
