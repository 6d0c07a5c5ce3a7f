// NCCL kernels of older traces (no collective arguments) get their collective from the "nccl:<name>"
// range their launch lies in: the shape of a public PARAM DLRM trace (facebookresearch/param,
// et_replay/tests/inputs/dlrm_kineto.tar.gz, PyTorch 2.1, 8 ranks).
#include "sources/kineto/range_collectives.h"

#include <gtest/gtest.h>

#include <string>

#include "sources/kineto/kineto_reader.h"

namespace gpudoctor {
namespace range_collectives_test {

Result<RankTrace> readText(const std::string& text) {
  auto in = ByteStream::fromMemory(text.data(), text.size(), "mem.json");
  return readKinetoTrace(*in, "mem.json", KinetoReadOptions{});
}

std::string trace(const std::string& distributed) {
  return R"json({"schemaVersion": 1, )json" + distributed + R"json("traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "nccl:all_to_all", "pid": 1, "tid": 1, "ts": 10, "dur": 56,
   "args": {"External id": 1423, "Input Dims": [[6144]], "Input type": ["float"]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 20, "dur": 5,
   "args": {"correlation": 7}},
  {"ph": "X", "cat": "kernel", "name": "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
   "pid": 0, "tid": 84, "ts": 30, "dur": 2146, "args": {"correlation": 7, "stream": 84}},
  {"ph": "X", "cat": "user_annotation", "name": "nccl:all_reduce", "pid": 1, "tid": 1, "ts": 100, "dur": 59,
   "args": {"Input Dims": [[394241]], "Input type": ["long int"]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": 110, "dur": 5,
   "args": {"correlation": 8}},
  {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
   "pid": 0, "tid": 84, "ts": 2200, "dur": 40, "args": {"correlation": 8, "stream": 84}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 120, "dur": 5,
   "args": {"correlation": 9}},
  {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
   "pid": 0, "tid": 84, "ts": 2300, "dur": 40, "args": {"correlation": 9, "stream": 84}},
  {"ph": "X", "cat": "user_annotation", "name": "nccl:_all_gather_base", "pid": 1, "tid": 1, "ts": 300, "dur": 20,
   "args": {"Input Dims": [[1024]], "Input type": ["c10::BFloat16"]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 305, "dur": 5,
   "args": {"correlation": 11}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
   "pid": 0, "tid": 84, "ts": 2500, "dur": 40, "args": {"correlation": 11, "stream": 84}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 200, "dur": 5,
   "args": {"correlation": 10}},
  {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
   "pid": 0, "tid": 84, "ts": 2400, "dur": 40, "args": {"correlation": 10, "stream": 84}}
  ]})json";
}

const Collective* collectiveOf(const RankTrace& t, int64_t correlation) {
  for (const Event& e : t.events)
    if (e.kind == EventKind::kKernel && e.correlation == correlation)
      return e.collective ? &t.collectives[e.collective - 1] : nullptr;
  return nullptr;
}

TEST(RangeCollectives, KernelsTakeTheirRangesCollectiveSizeAndDefaultGroup) {
  auto r = readText(trace(R"("distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8}, )"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  const RankTrace& t = r.value();
  const Collective* a2a = collectiveOf(t, 7);
  ASSERT_NE(a2a, nullptr);
  EXPECT_EQ(t.strings.view(a2a->coll_name), "all_to_all");
  EXPECT_EQ(t.strings.view(a2a->dtype), "float");
  EXPECT_EQ(a2a->in_nelems, 6144);
  EXPECT_EQ(a2a->group_size, 8);
  EXPECT_EQ(t.strings.view(a2a->pg_name), "default_pg");
  EXPECT_EQ(t.strings.view(a2a->pg_ranks), "[0, 1, 2, 3, 4, 5, 6, 7]");
  EXPECT_EQ(a2a->seq, 0);
  // Launched inside the range, on its thread: the all-reduce of 394241 elements.
  const Collective* ar = collectiveOf(t, 9);
  ASSERT_NE(ar, nullptr);
  EXPECT_EQ(t.strings.view(ar->coll_name), "all_reduce");
  EXPECT_EQ(ar->in_nelems, 394241);
  EXPECT_EQ(ar->process_group, a2a->process_group);
  // Another thread's launch (10 inside the range's time, not its thread) and one after the range: none.
  EXPECT_EQ(collectiveOf(t, 8), nullptr);
  EXPECT_EQ(collectiveOf(t, 10), nullptr);
  // An all-gather's range holds one rank's input: the output is the group's.
  const Collective* ag = collectiveOf(t, 11);
  ASSERT_NE(ag, nullptr);
  EXPECT_EQ(ag->in_nelems, 1024);
  EXPECT_EQ(ag->out_nelems, 8 * 1024);
  EXPECT_EQ(ag->seq, 2);  // the third of the group: the all-to-all, the all-reduce, this
}

TEST(RangeCollectives, WithoutWorldSizeNoGroupToJoin) {
  auto r = readText(trace(""));
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Collective* a2a = collectiveOf(r.value(), 7);
  ASSERT_NE(a2a, nullptr);
  EXPECT_EQ(a2a->in_nelems, 6144);
  EXPECT_EQ(a2a->group_size, -1);
  EXPECT_EQ(a2a->process_group, 0u);
}

}  // namespace range_collectives_test
}  // namespace gpudoctor
