#include "model/trace.h"

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
    case EventKind::kCpuOp: return "cpu_op";
    case EventKind::kUserAnnotation: return "user_annotation";
    case EventKind::kGpuUserAnnotation: return "gpu_user_annotation";
    case EventKind::kCudaRuntime: return "cuda_runtime";
    case EventKind::kCudaDriver: return "cuda_driver";
    case EventKind::kCudaSync: return "cuda_sync";
    case EventKind::kKernel: return "kernel";
    case EventKind::kMemcpy: return "gpu_memcpy";
    case EventKind::kMemset: return "gpu_memset";
    case EventKind::kPythonFunction: return "python_function";
    case EventKind::kOverhead: return "overhead";
    case EventKind::kOther: return "other";
  }
  return "other";
}

}  // namespace gpudoctor
