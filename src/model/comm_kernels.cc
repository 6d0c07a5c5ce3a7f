#include "model/comm_kernels.h"

#include <iterator>

namespace gpudoctor {

namespace {
// Prefixes of demangled kernel names as CUPTI reports them (Kineto writes them as the event name).
constexpr CommKernelPattern kPatterns[] = {
    {"nccl", "ncclDevKernel", "NCCL >= 2.19 (ncclDevKernel_AllReduce_Sum_f32_RING_LL, ...)"},
    {"nccl", "ncclKernel", "NCCL < 2.19 (ncclKernel_AllReduce_RING_LL_Sum_float, ...)"},
    // DeepEP's namespaces (csrc/kernels/api.cuh): intranode (NVLink), internode (RDMA + NVLink),
    // internode_ll (low latency); deep_ep::layout:: (get_dispatch_layout) is computation, not listed.
    {"deepep", "deep_ep::intranode::", "DeepEP over NVLink (dispatch, combine, notify_dispatch, cached_notify_*)"},
    {"deepep", "deep_ep::internode::", "DeepEP over RDMA + NVLink (NVSHMEM)"},
    {"deepep", "deep_ep::internode_ll::", "DeepEP's low-latency kernels (pure RDMA, NVSHMEM IBGDA)"},
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
  return {};
}

}  // namespace gpudoctor
