#include "sources/kineto/roles.h"

#include <charconv>
#include <string_view>

#include "model/comm_kernels.h"

namespace gpudoctor {

namespace {
bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Host calls that block until the GPU catches up (the synchronous copies and sets included).
bool isBlockingSyncCall(std::string_view n) {
  static constexpr std::string_view kNames[] = {
      "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "cudaMemcpy", "cudaMemcpy2D",
      "cudaMemcpyToSymbol", "cudaMemcpyFromSymbol", "cudaMemset", "cuCtxSynchronize", "cuStreamSynchronize",
      "cuEventSynchronize", "cuMemcpyDtoH_v2", "cuMemcpyHtoD_v2", "cuMemcpyDtoH", "cuMemcpyHtoD",
      "cudaThreadSynchronize",
      // ROCm's HIP runtime as roctracer names it (PyTorch's blocking copies use hipMemcpyWithStream).
      "hipDeviceSynchronize", "hipStreamSynchronize", "hipEventSynchronize", "hipMemcpy", "hipMemcpyWithStream",
      "hipMemset"};
  for (auto k : kNames)
    if (n == k) return true;
  return false;
}

bool isGraphLaunch(std::string_view n) {
  return n == "cudaGraphLaunch" || n == "cudaGraphLaunch_ptsz" || n == "cuGraphLaunch" || n == "cuGraphLaunch_ptsz" ||
         n == "hipGraphLaunch";
}

// cudaEventRecord(event, stream) and cudaStreamWaitEvent(stream, event): the runtime's, the driver's
// and HIP's names, per-thread default stream variants included. Kineto records neither's stream nor
// event (only CUPTI's synchronization records, with enable_cuda_sync_events, pair them).
bool isEventRecord(std::string_view n) {
  return n == "cudaEventRecord" || n == "cudaEventRecord_ptsz" || n == "cudaEventRecordWithFlags" ||
         n == "cudaEventRecordWithFlags_ptsz" || n == "cuEventRecord" || n == "cuEventRecord_ptsz" ||
         n == "cuEventRecordWithFlags" || n == "cuEventRecordWithFlags_ptsz" || n == "hipEventRecord" ||
         n == "hipEventRecordWithFlags";
}

bool isStreamWait(std::string_view n) {
  return n == "cudaStreamWaitEvent" || n == "cudaStreamWaitEvent_ptsz" || n == "cuStreamWaitEvent" ||
         n == "cuStreamWaitEvent_ptsz" || n == "hipStreamWaitEvent";
}

constexpr std::string_view kStepPrefix = "ProfilerStep#";
}  // namespace

uint16_t kinetoNameRoles(std::string_view n) {
  uint16_t r = 0;
  if (startsWith(n, kStepPrefix)) r |= kRoleStep;
  if (startsWith(n, "enumerate(DataLoader)")) {
    r |= kRoleDataLoading;
    if (n.find("_SingleProcessDataLoaderIter") != std::string_view::npos) r |= kRoleLoaderInProcess;
  }
  if (startsWith(n, "Optimizer.step#")) r |= kRoleOptimizerStep;
  if (isBlockingSyncCall(n)) r |= kRoleSyncCall;
  if (isGraphLaunch(n)) r |= kRoleGraphLaunch;
  if (isEventRecord(n)) r |= kRoleEventRecord;
  if (isStreamWait(n)) r |= kRoleStreamWait;
  if (!commKernelLibrary(n).empty()) r |= kRoleCollective;  // NCCL and the table's other libraries
  return r;
}

KinetoRoleAssigner::KinetoRoleAssigner(RankTrace& t) : t_(t), flags_(t.strings.size()) {
  for (uint32_t id = 0; id < t.strings.size(); ++id) flags_[id] = kinetoNameRoles(t.strings.view(id));
  t.step_marks.clear();
}

int64_t KinetoRoleAssigner::stepNumberOf(uint32_t name) const {
  std::string_view n = t_.strings.view(name).substr(kStepPrefix.size());
  int64_t num = -1;
  std::from_chars(n.data(), n.data() + n.size(), num);
  return num;
}

void assignKinetoRoles(RankTrace& t) {
  KinetoRoleAssigner a(t);
  for (uint32_t i = 0; i < t.events.size(); ++i) a.apply(i);
}

}  // namespace gpudoctor
