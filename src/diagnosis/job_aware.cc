#include "diagnosis/job_aware.h"

#include <string_view>

namespace gpudoctor {
namespace {

struct InUse {
  const char* feature;                 // as the note names it
  std::vector<std::string_view> says;  // a fix line containing any of these advises it
  std::string instead;                 // advice for the job as it is
};

std::vector<InUse> featuresInUse(const JobProfile& job) {
  std::vector<InUse> v;
  if (job.cuda_graphs)
    v.push_back({"CUDA graphs",
                 {"CUDAGraph", "cuda.graph", "reduce-overhead"},
                 "# CUDA graphs already replay the step (cudaGraphLaunch): capture what still launches "
                 "eagerly (the optimizer step, the loss), or raise the micro-batch"});
  if (job.torch_compile)
    v.push_back({"torch.compile",
                 {"torch.compile"},
                 "# torch.compile is in use: look for graph breaks (TORCH_LOGS=graph_breaks) and recompiles"});
  if (job.optimizer_impl == "fused") v.push_back({"a fused optimizer", {"fused=True"}, ""});
  if (job.loader_multiprocess && *job.loader_multiprocess)
    v.push_back({"DataLoader workers",
                 {"num_workers="},
                 "# the DataLoader has workers already: raise num_workers / prefetch_factor, or make each "
                 "sample cheaper to produce"});
  if (job.pin_memory && *job.pin_memory) v.push_back({"pinned memory", {"pin_memory=True"}, ""});
  if (job.autocast && *job.autocast) v.push_back({"autocast", {"torch.autocast("}, ""});
  if (job.data_parallel == "fsdp" || job.data_parallel == "zero")
    v.push_back({"FSDP/ZeRO (not DDP)",
                 {"DDP(", "no_sync"},
                 "# FSDP: prefetch the next all-gather and bound the ones in flight:\n"
                 "model = FSDP(model, forward_prefetch=True, backward_prefetch=BackwardPrefetch.BACKWARD_PRE, "
                 "limit_all_gathers=True)"});
  // Not in use but out of reach: a data-dependent shape (boolean-mask indexing, nonzero, unique)
  // syncs the step and cannot be captured; ...
  if (hasDataDependentShapes(job))
    v.push_back({"data-dependent shapes (aten::nonzero: not capturable into CUDA graphs)",
                 {"CUDAGraph", "cuda.graph", "reduce-overhead"},
                 "# boolean-mask indexing (aten::nonzero) gives tensors data-dependent shapes and syncs the "
                 "step: CUDA graphs cannot capture it; replace it with torch.where (see the sync finding), "
                 "then capture the step"});
  // ... and FSDP's hooks, allocations and collectives per step keep the step out of stock CUDA-graph
  // capture.
  if (job.data_parallel == "fsdp")
    v.push_back({"FSDP (not capturable into CUDA graphs)",
                 {"CUDAGraph", "cuda.graph", "reduce-overhead"},
                 "# FSDP's per-step hooks and collectives keep it out of CUDA graphs: compile each block "
                 "(torch.compile(block), default mode) to fuse its kernels, or raise the micro-batch"});
  return v;
}

const InUse* match(const std::vector<InUse>& in_use, const std::string& line) {
  for (const InUse& f : in_use)
    for (std::string_view s : f.says)
      if (line.find(s) != std::string::npos) return &f;
  return nullptr;
}

}  // namespace

bool hasDataDependentShapes(const JobProfile& job) {
  for (const HostSync& h : job.host_syncs)
    if (h.op == "aten::nonzero" || h.op == "aten::masked_select" || h.op.starts_with("aten::_unique") ||
        h.op.starts_with("aten::unique"))
      return true;
  return false;
}

bool advisesFeatureInUse(const JobProfile& job, const std::string& fix_line, std::string* feature) {
  const std::vector<InUse> in_use = featuresInUse(job);
  const InUse* f = match(in_use, fix_line);
  if (f && feature) *feature = f->feature;
  return f != nullptr;
}

void respectJobProfile(const JobProfile& job, std::vector<Finding>& findings) {
  const std::vector<InUse> in_use = featuresInUse(job);
  if (in_use.empty()) return;
  for (Finding& x : findings) {
    std::vector<std::string> kept;
    std::vector<const InUse*> dropped;
    bool continuation = false;  // the line after a dropped one ending in ',' continues it
    for (const std::string& line : x.fix) {
      const bool cont = continuation && !line.empty() && line.front() == ' ';
      continuation = false;
      if (cont) {
        continuation = !line.empty() && line.back() == ',';
        continue;
      }
      if (const InUse* f = match(in_use, line)) {
        bool seen = false;
        for (const InUse* d : dropped) seen |= d == f;
        if (!seen) dropped.push_back(f);
        continuation = !line.empty() && line.back() == ',';
        continue;
      }
      kept.push_back(line);
    }
    if (dropped.empty()) continue;
    for (const InUse* f : dropped) {
      if (f->instead.empty()) continue;
      size_t from = 0;
      for (size_t nl; (nl = f->instead.find('\n', from)) != std::string::npos; from = nl + 1)
        kept.push_back(f->instead.substr(from, nl - from));
      kept.push_back(f->instead.substr(from));
    }
    std::string names;
    for (const InUse* f : dropped) names += (names.empty() ? "" : ", ") + std::string(f->feature);
    x.explanation += " Already in use (job profile): " + names + ".";
    x.fix = std::move(kept);
  }
}

}  // namespace gpudoctor
