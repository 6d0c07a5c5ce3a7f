// Roles the Kineto reader sets from PyTorch's names (steps and their numbers, loader, optimizer,
// blocking calls, graph launches, collectives with process group and sequence number), and where
// it must not set them (ranges projected on GPU streams, a name on the wrong kind of event).
#include "sources/kineto/roles.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "sources/kineto/kineto_reader.h"

namespace gpudoctor {
namespace roles_test {
RankTrace readText(const std::string& text) {
  auto in = ByteStream::fromMemory(text.data(), text.size(), "mem.json");
  auto r = readKinetoTrace(*in, "mem.json");
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? std::move(r.value()) : RankTrace{};
}

const Event& named(const RankTrace& t, std::string_view name, EventKind kind) {
  for (const auto& e : t.events)
    if (t.strings.view(e.name) == name && e.kind == kind) return e;
  ADD_FAILURE() << "no event " << name;
  static Event none;
  return none;
}

TEST(KinetoRoles, NamesGiveRoles) {
  EXPECT_EQ(kinetoNameRoles("ProfilerStep#12"), kRoleStep);
  EXPECT_EQ(kinetoNameRoles("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"), kRoleDataLoading);
  EXPECT_EQ(kinetoNameRoles("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"),
            kRoleDataLoading | kRoleLoaderInProcess);
  EXPECT_EQ(kinetoNameRoles("Optimizer.step#AdamW.step"), kRoleOptimizerStep);
  EXPECT_EQ(kinetoNameRoles("cudaStreamSynchronize"), kRoleSyncCall);
  EXPECT_EQ(kinetoNameRoles("cuMemcpyDtoH_v2"), kRoleSyncCall);
  EXPECT_EQ(kinetoNameRoles("cudaMemcpyAsync"), 0);  // blocking only for pageable memory: not a role
  EXPECT_EQ(kinetoNameRoles("cudaGraphLaunch"), kRoleGraphLaunch);
  EXPECT_EQ(kinetoNameRoles("cudaEventRecord"), kRoleEventRecord);
  EXPECT_EQ(kinetoNameRoles("cuEventRecordWithFlags"), kRoleEventRecord);
  EXPECT_EQ(kinetoNameRoles("cudaStreamWaitEvent"), kRoleStreamWait);
  EXPECT_EQ(kinetoNameRoles("hipStreamWaitEvent"), kRoleStreamWait);
  EXPECT_EQ(kinetoNameRoles("cudaEventQuery"), 0);
  EXPECT_EQ(kinetoNameRoles("ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)"), kRoleCollective);
  EXPECT_EQ(kinetoNameRoles("void ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)"), kRoleCollective);
  EXPECT_EQ(kinetoNameRoles("aten::mm"), 0);
  EXPECT_EQ(kinetoNameRoles("profilerstep#1"), 0);
}

const char* kTrace = R"json({"traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#7", "pid": 1, "tid": 1, "ts": 10, "dur": 100},
  {"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#7", "pid": 0, "tid": 7, "ts": 12, "dur": 90},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#8", "pid": 1, "tid": 1, "ts": 110, "dur": 100},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#x", "pid": 1, "tid": 1, "ts": 210, "dur": 100},
  {"ph": "X", "cat": "user_annotation", "name": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
   "pid": 1, "tid": 1, "ts": 11, "dur": 5},
  {"ph": "X", "cat": "user_annotation", "name": "Optimizer.step#AdamW.step", "pid": 1, "tid": 1, "ts": 80, "dur": 5},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 1, "tid": 1, "ts": 90, "dur": 5},
  {"ph": "X", "cat": "cpu_op", "name": "cudaStreamSynchronize", "pid": 1, "tid": 1, "ts": 89, "dur": 7},
  {"ph": "X", "cat": "cuda_runtime", "name": "ProfilerStep#9", "pid": 1, "tid": 1, "ts": 96, "dur": 1},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "pid": 1, "tid": 1, "ts": 97, "dur": 1,
   "args": {"correlation": 9}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", "pid": 0, "tid": 17, "ts": 60,
   "dur": 5, "args": {"Collective name": "allreduce", "Process Group Name": "0", "Process Group Ranks": "[0, 1]"}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllGather_RING_LL(x)", "pid": 0, "tid": 19, "ts": 40,
   "dur": 5, "args": {"Collective name": "allgather", "Process Group Name": "1", "Process Group Ranks": "[0]"}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", "pid": 0, "tid": 17, "ts": 20,
   "dur": 5, "args": {"Collective name": "allreduce", "Process Group Name": "0", "Process Group Ranks": "[0, 1]"}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_Broadcast_RING_LL(x)", "pid": 0, "tid": 17, "ts": 70,
   "dur": 5, "args": {"Collective name": "broadcast", "Process Group Ranks": "[0, 1, 2]"}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv(x)", "pid": 0, "tid": 17, "ts": 75, "dur": 5},
  {"ph": "X", "cat": "kernel", "name": "my_gemm", "pid": 0, "tid": 7, "ts": 30, "dur": 5, "args": {"correlation": 9}}
]})json";

TEST(KinetoRoles, TheReaderSetsRolesAndStepNumbers) {
  RankTrace t = readText(kTrace);
  EXPECT_EQ(named(t, "ProfilerStep#7", EventKind::kRange).roles, kRoleStep);
  EXPECT_EQ(named(t, "ProfilerStep#7", EventKind::kGpuRange).roles, 0);  // projected on a GPU stream
  EXPECT_EQ(named(t, "ProfilerStep#9", EventKind::kRuntimeCall).roles, 0);
  EXPECT_EQ(named(t, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", EventKind::kRange).roles,
            kRoleDataLoading | kRoleLoaderInProcess);
  EXPECT_EQ(named(t, "Optimizer.step#AdamW.step", EventKind::kRange).roles, kRoleOptimizerStep);
  EXPECT_EQ(named(t, "cudaStreamSynchronize", EventKind::kRuntimeCall).roles, kRoleSyncCall);
  EXPECT_EQ(named(t, "cudaStreamSynchronize", EventKind::kHostOp).roles, 0);  // only the runtime call blocks
  EXPECT_EQ(named(t, "cudaGraphLaunch", EventKind::kRuntimeCall).roles, kRoleGraphLaunch);
  EXPECT_EQ(named(t, "my_gemm", EventKind::kKernel).roles, 0);
  EXPECT_TRUE(named(t, "ncclDevKernel_SendRecv(x)", EventKind::kKernel).hasRole(kRoleCollective));  // no args
  // Step numbers, in event order; a step without a number has -1.
  ASSERT_EQ(t.step_marks.size(), 3u);
  std::vector<int64_t> numbers;
  for (const auto& m : t.step_marks) {
    EXPECT_TRUE(t.events[m.event].hasRole(kRoleStep));
    EXPECT_EQ(t.stepNumber(m.event), m.number);
    numbers.push_back(m.number);
  }
  EXPECT_EQ(numbers, (std::vector<int64_t>{7, 8, -1}));
  EXPECT_LT(t.step_marks[0].event, t.step_marks[1].event);
  for (uint32_t i = 0; i < t.events.size(); ++i) {
    if (!t.events[i].hasRole(kRoleStep)) {
      EXPECT_EQ(t.stepNumber(i), -1);
    }
  }
}

TEST(KinetoRoles, CollectivesGetTheirProcessGroupAndSequenceInGpuStartOrder) {
  RankTrace t = readText(kTrace);
  std::vector<std::tuple<std::string, std::string, int64_t>> seen;  // (collective, group, seq) by start
  for (const auto& e : t.events) {
    if (e.collective == 0) continue;
    EXPECT_TRUE(e.hasRole(kRoleCollective));
    const Collective& c = t.collectives[e.collective - 1];
    seen.emplace_back(std::string(t.strings.view(c.coll_name)), std::string(t.strings.view(c.process_group)), c.seq);
  }
  using T = std::tuple<std::string, std::string, int64_t>;
  EXPECT_EQ(seen, (std::vector<T>{{"allreduce", "0", 0},
                                  {"allgather", "1", 0},
                                  {"allreduce", "0", 1},
                                  {"broadcast", "[0, 1, 2]", 0}}));  // no group name: the rank list
}

TEST(KinetoRoles, AssignOnAHandBuiltTraceMatchesTheReader) {
  RankTrace t = readText(kTrace);
  std::vector<uint8_t> before;
  for (const auto& e : t.events) before.push_back(e.roles);
  auto marks = t.step_marks;
  for (auto& e : t.events) e.roles = 0;
  assignKinetoRoles(t);
  std::vector<uint8_t> after;
  for (const auto& e : t.events) after.push_back(e.roles);
  EXPECT_EQ(before, after);
  ASSERT_EQ(t.step_marks.size(), marks.size());
  for (size_t i = 0; i < marks.size(); ++i) {
    EXPECT_EQ(t.step_marks[i].event, marks[i].event);
    EXPECT_EQ(t.step_marks[i].number, marks[i].number);
  }
}

}  // namespace roles_test
}  // namespace gpudoctor
