// NVTX callbacks on the application's threads: NCCL's payloads (communicator, bytes) queued for the
// writer, and --steps' step ranges attaching and detaching the recorder.
#include <generated_nvtx_meta.h>
#include <nvtx3/nvToolsExtPayload.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <regex>
#include <string>
#include <vector>

#include "gpu/recorder/cupti_api.h"
#include "gpu/recorder/recorder.h"

namespace gpudoctor::recorder {

// NVTX callbacks (CUPTI's, on the application's threads): NCCL's range pushes, always (a few per
// step: each carries the call's communicator and bytes), and with --steps the ranges that can be
// steps. Nothing else of NVTX reaches us; ranges themselves come as activity records.
std::string Recorder::enableNvtxCallbacks() {
  std::vector<CUpti_CallbackId> ids = {CUPTI_CBID_NVTX_nvtxDomainRangePushEx};
  if (steps_first_ > 0)
    for (auto id : {CUPTI_CBID_NVTX_nvtxRangePushA, CUPTI_CBID_NVTX_nvtxRangePushEx, CUPTI_CBID_NVTX_nvtxRangeStartA,
                    CUPTI_CBID_NVTX_nvtxRangeStartEx, CUPTI_CBID_NVTX_nvtxDomainRangeStartEx})
      ids.push_back(id);
  for (auto id : ids) {
    CUptiResult r = g_cupti.cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_NVTX, id);
    if (r != CUPTI_SUCCESS) {
      const char* m = "?";
      g_cupti.cuptiGetResultString(r, &m);
      // NCCL's payloads are a bonus; --steps cannot work without them.
      if (steps_first_ > 0) return std::string("CUPTI refused the NVTX callbacks --steps needs: ") + m;
      return {};
    }
  }
  return {};
}

namespace {

uint32_t systemTid() {
  static thread_local uint32_t tid = static_cast<uint32_t>(::syscall(SYS_gettid));
  return tid;
}

}  // namespace

void Recorder::onNvtx(CUpti_CallbackId cbid, const CUpti_NvtxData* d) {
  const void* p = d->functionParams;
  if (p == nullptr) return;
  const nvtxEventAttributes_t* a = nullptr;
  const char* msg = nullptr;
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx:
      a = static_cast<const nvtxDomainRangePushEx_params*>(p)->core.eventAttrib;
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx:
      a = static_cast<const nvtxDomainRangeStartEx_params*>(p)->core.eventAttrib;
      break;
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
      a = static_cast<const nvtxRangePushEx_params*>(p)->eventAttrib;
      break;
    case CUPTI_CBID_NVTX_nvtxRangeStartEx:
      a = static_cast<const nvtxRangeStartEx_params*>(p)->eventAttrib;
      break;
    case CUPTI_CBID_NVTX_nvtxRangePushA:
      msg = static_cast<const nvtxRangePushA_params*>(p)->message;
      break;
    case CUPTI_CBID_NVTX_nvtxRangeStartA:
      msg = static_cast<const nvtxRangeStartA_params*>(p)->message;
      break;
    default:
      return;
  }
  if (a != nullptr && a->payloadType == NVTX_PAYLOAD_TYPE_EXT && a->reserved0 >= 1 && a->payload.ullValue != 0) {
    // NCCL's binary payload: one nvtxPayloadData_t naming a static schema of NCCL's (NVTX hands
    // the pointer over as an integer).
    // NOLINTNEXTLINE(performance-no-int-to-ptr)
    const auto* pd = reinterpret_cast<const nvtxPayloadData_t*>(static_cast<uintptr_t>(a->payload.ullValue));
    const uint64_t sid = pd->schemaId - NVTX_PAYLOAD_SCHEMA_ID_STATIC_START;
    if (pd->schemaId < NVTX_PAYLOAD_SCHEMA_ID_STATIC_START || sid > 64 || pd->payload == nullptr) return;
    rec::NcclCall c{};
    c.schema = static_cast<uint32_t>(sid);
    if (pd->size != rec::ncclPayloadBytes(c.schema)) return;
    const auto* b = static_cast<const uint8_t*>(pd->payload);
    c.arg = c.arg2 = -1;
    if (rec::isNcclCollectiveSchema(c.schema)) {
      if (!attached_now_.load(std::memory_order_acquire)) return;
      std::memcpy(&c.comm, b, 8);
      std::memcpy(&c.bytes, b + 8, 8);
      if (pd->size == 24) std::memcpy(&c.arg, b + 16, 4);
    } else if (rec::isNcclCommSizeSchema(c.schema)) {  // kept detached too: sizes for later windows
      std::memcpy(&c.comm, b, 8);
      std::memcpy(&c.arg, b + 8, 4);
      std::memcpy(&c.arg2, b + 12, 4);
    } else {
      return;
    }
    c.start_ns = cuptiNow();
    c.tid = systemTid();
    std::lock_guard<std::mutex> l(nccl_mu_);
    nccl_calls_.push_back(c);
    return;
  }
  if (steps_first_ <= 0) return;
  if (a != nullptr && a->messageType == NVTX_MESSAGE_TYPE_ASCII) msg = a->message.ascii;
  if (msg != nullptr) stepRangeBegins(msg);
}

// --steps N-M: the k-th step range begins (k from 1): attach at N, detach at M + 1.
void Recorder::stepRangeBegins(const char* msg) {
  if (!std::regex_search(msg, step_re_)) return;
  int64_t k = steps_seen_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (k == steps_first_) {
    {
      std::lock_guard<std::mutex> l(first_step_mu_);
      first_step_ = {cuptiNow(), systemTid(), msg, true};
    }
    attach();
  } else if (k == steps_last_ + 1)
    detach();
}

}  // namespace gpudoctor::recorder
