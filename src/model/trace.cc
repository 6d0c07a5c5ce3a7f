#include "model/trace.h"

#include <algorithm>

namespace gpudoctor {

StringPool::StringPool() { intern(""); }

uint32_t StringPool::intern(std::string_view s) {
  auto it = index_.find(s);
  if (it != index_.end()) return it->second;
  auto id = static_cast<uint32_t>(strings_.size());
  strings_.emplace_back(s);
  index_.emplace(strings_.back(), id);
  return id;
}

std::string_view eventKindName(EventKind k) {
  switch (k) {
    case EventKind::kHostOp:
      return "cpu_op";
    case EventKind::kRange:
      return "user_annotation";
    case EventKind::kGpuRange:
      return "gpu_user_annotation";
    case EventKind::kRuntimeCall:
      return "cuda_runtime";
    case EventKind::kDriverCall:
      return "cuda_driver";
    case EventKind::kSyncEvent:
      return "cuda_sync";
    case EventKind::kKernel:
      return "kernel";
    case EventKind::kMemcpy:
      return "gpu_memcpy";
    case EventKind::kMemset:
      return "gpu_memset";
    case EventKind::kHostFunction:
      return "python_function";
    case EventKind::kProfilerOverhead:
      return "overhead";
    case EventKind::kOther:
      return "other";
  }
  return "other";
}

int64_t RankTrace::stepNumber(uint32_t i) const {
  auto it = std::lower_bound(step_marks.begin(), step_marks.end(), i,
                             [](const StepMark& m, uint32_t e) { return m.event < e; });
  return it != step_marks.end() && it->event == i ? it->number : -1;
}

}  // namespace gpudoctor
