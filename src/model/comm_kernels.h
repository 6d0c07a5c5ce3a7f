// Communication that runs as GPU kernels, by kernel name: NCCL's collectives and the libraries that
// move data between GPUs in kernels of their own (expert-parallel dispatch/combine over NVSHMEM,
// one-shot all-reduces over symmetric memory). One documented table (comm_kernels.cc) that both the
// trace readers (roles) and the kernel classifier use; extend it there, with the source of the names.
#pragma once
#include <string_view>

namespace gpudoctor {

struct CommKernelPattern {
  std::string_view library;  // short name: "nccl", "nvshmem", ...
  std::string_view prefix;   // the demangled name starts with it (after an optional "void ")
  std::string_view note;     // where the names come from
};

// The table, in match order.
const CommKernelPattern* commKernelPatterns(size_t* count);

// The library whose communication kernel this is ("expert_parallel" for isExpertParallelKernel);
// empty when the kernel is not communication.
std::string_view commKernelLibrary(std::string_view kernel_name);

// An expert-parallel dispatch / combine / notify kernel by its structure, whatever namespace spells
// it: a function named for one of those verbs in a transport namespace (intranode, internode,
// internode_ll, low_latency).
bool isExpertParallelKernel(std::string_view kernel_name);

}  // namespace gpudoctor
