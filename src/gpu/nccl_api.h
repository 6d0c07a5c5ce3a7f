// The part of NCCL's C API gpudoctor calls, declared here and resolved with dlopen at run time:
// no nccl.h at build time and no link-time dependency, so one binary works with the host's NCCL
// (as NVML is reached in probes/). Types and values follow nccl.h (stable since NCCL 2.0).
#pragma once
#include <cstddef>
#include <string>

#include "common/result.h"

namespace gpudoctor::nccl {

using Result = int;  // ncclResult_t: 0 = ncclSuccess
using Comm = struct Opaque*;
using Stream = void*;  // cudaStream_t
struct UniqueId {
  char internal[128];
};
enum DataType {
  kInt8 = 0,
  kUint8 = 1,
  kInt32 = 2,
  kUint32 = 3,
  kInt64 = 4,
  kUint64 = 5,
  kFloat16 = 6,
  kFloat32 = 7,
  kFloat64 = 8,
  kBfloat16 = 9
};
enum RedOp { kSum = 0, kProd = 1, kMax = 2, kMin = 3, kAvg = 4 };

struct Api {
  Result (*GetVersion)(int*) = nullptr;
  Result (*GetUniqueId)(UniqueId*) = nullptr;
  Result (*CommInitRank)(Comm*, int, UniqueId, int) = nullptr;
  Result (*CommDestroy)(Comm) = nullptr;
  const char* (*GetErrorString)(Result) = nullptr;
  Result (*AllReduce)(const void*, void*, size_t, int, int, Comm, Stream) = nullptr;
  Result (*AllGather)(const void*, void*, size_t, int, Comm, Stream) = nullptr;
  Result (*ReduceScatter)(const void*, void*, size_t, int, int, Comm, Stream) = nullptr;
  Result (*Broadcast)(const void*, void*, size_t, int, int, Comm, Stream) = nullptr;
  Result (*Reduce)(const void*, void*, size_t, int, int, int, Comm, Stream) = nullptr;
  Result (*Send)(const void*, size_t, int, int, Comm, Stream) = nullptr;
  Result (*Recv)(void*, size_t, int, int, Comm, Stream) = nullptr;
  Result (*GroupStart)() = nullptr;
  Result (*GroupEnd)() = nullptr;
  std::string library;
};

// Loads libnccl.so.2 (or GPUDOCTOR_NCCL_LIBRARY); Error names what is missing.
gpudoctor::Result<const Api*> load();

}  // namespace gpudoctor::nccl
