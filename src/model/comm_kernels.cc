#include "model/comm_kernels.h"

#include <algorithm>
#include <iterator>

namespace gpudoctor {

namespace {
// Prefixes of demangled kernel names as CUPTI reports them (Kineto writes them as the event name).
constexpr CommKernelPattern kPatterns[] = {
    {"nccl", "ncclDevKernel", "NCCL >= 2.19 (ncclDevKernel_AllReduce_Sum_f32_RING_LL, ...)"},
    {"nccl", "ncclKernel", "NCCL < 2.19 (ncclKernel_AllReduce_RING_LL_Sum_float, ...)"},
    // Expert-parallel dispatch/combine kernels (DeepEP and the like) are matched by their structure
    // instead of one namespace: isExpertParallelKernel below.
    {"nvshmem", "nvshmemi_", "NVSHMEM's on-stream collectives and barriers (nvshmemi_*_kernel)"},
    {"nvshmem", "nvshmemxi_", "NVSHMEM's on-stream collectives (nvshmemxi_*)"},
    // PyTorch symmetric memory (torch.ops.symm_mem.*): PyTorch 2.11 names them in an anonymous
    // namespace (seen: "void (anonymous namespace)::one_shot_all_reduce_kernel<float, 16, -1>(float**, ...)"
    // in testdata/cases/symm_mem); c10d::symmetric_memory:: in other versions.
    {"symmetric_memory", "(anonymous namespace)::one_shot_all_reduce_kernel", "symm_mem one_shot_all_reduce"},
    {"symmetric_memory", "(anonymous namespace)::two_shot_all_reduce_kernel", "symm_mem two_shot_all_reduce"},
    {"symmetric_memory", "(anonymous namespace)::multimem_", "symm_mem multimem_all_reduce / all_gather (NVLS)"},
    {"symmetric_memory", "c10d::symmetric_memory::", "PyTorch symmetric memory's kernels in its namespace"},
    {"custom_allreduce", "vllm::cross_device_reduce", "vLLM's custom all-reduce (cross_device_reduce_1stage/2stage)"},
    {"custom_allreduce", "tensorrt_llm::kernels::ar_fusion::", "TensorRT-LLM's fused all-reduce kernels"},
    {"mscclpp", "mscclpp::", "MSCCL++ kernels"},
};
}  // namespace

const CommKernelPattern* commKernelPatterns(size_t* count) {
  *count = std::size(kPatterns);
  return kPatterns;
}

std::string_view commKernelLibrary(std::string_view n) {
  if (n.substr(0, 5) == "void ") n.remove_prefix(5);
  for (const auto& p : kPatterns)
    if (n.substr(0, p.prefix.size()) == p.prefix) return p.library;
  if (isExpertParallelKernel(n)) return "expert_parallel";
  return {};
}

namespace {
// The qualified name before its template or argument list: "a::b::f" of "a::b::f<1>(int)".
std::string_view qualifiedName(std::string_view n) {
  if (n.substr(0, 5) == "void ") n.remove_prefix(5);
  return n.substr(0, std::min(n.find('<'), n.find('(')));
}

bool contains(std::string_view s, std::string_view w) { return s.find(w) != std::string_view::npos; }
}  // namespace

// DeepEP declares deep_ep::intranode::dispatch, deep_ep::internode_ll::combine, ... (its
// csrc/kernels/api.cuh); DeepSeek's public training trace (deepseek-ai/profile-data train.json)
// spells the same kernels dpsk::ep::internode::dispatch, ::combine, ::notify_dispatch and
// ::cached_notify. The transport namespace (intranode over NVLink, internode over RDMA,
// internode_ll / low_latency) and the verb are what they share; a layout kernel
// (get_dispatch_layout, in another namespace) computes and is not matched.
bool isExpertParallelKernel(std::string_view name) {
  std::string_view q = qualifiedName(name);
  size_t last = q.rfind("::");
  if (last == std::string_view::npos) return false;
  std::string_view scope = q.substr(0, last + 2), fn = q.substr(last + 2);
  const bool transport = contains(scope, "::intranode::") || contains(scope, "::internode::") ||
                         contains(scope, "::internode_ll::") || contains(scope, "::low_latency::");
  const bool verb = contains(fn, "dispatch") || contains(fn, "combine") || contains(fn, "notify");
  return transport && verb && !contains(fn, "layout");
}

}  // namespace gpudoctor
