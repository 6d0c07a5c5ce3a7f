// CUPTI's activity records into the recording's (model/recording.h), on the writer thread.
#include <mutex>
#include <string>

#include "gpu/recorder/config.h"
#include "gpu/recorder/cupti_api.h"
#include "gpu/recorder/recorder.h"

namespace gpudoctor::recorder {

Recorder::ApiName Recorder::apiNameOf(rec::ApiDomain d, uint32_t cbid) {
  uint64_t key = (static_cast<uint64_t>(d) << 32) | cbid;
  auto it = api_names_.find(key);
  if (it != api_names_.end()) return it->second;
  const char* n = nullptr;
  g_cupti.cuptiGetCallbackName(d == rec::ApiDomain::kRuntime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API,
                               cbid, &n);
  std::string name = apiName(n);
  ApiName a{intern(name), rec::isLaunchCall(name)};
  api_names_.emplace(key, a);
  return a;
}

namespace {

// The fields memcpy and memset records share.
template <class M>
rec::Copy copyOf(const M* m) {
  rec::Copy o{};
  o.start_ns = m->start;
  o.end_ns = m->end;
  o.bytes = m->bytes;
  o.correlation = m->correlationId;
  o.device = m->deviceId;
  o.stream = m->streamId;
  o.graph_id = m->graphId;
  return o;
}

}  // namespace

void Recorder::convert(const uint8_t* buf, size_t valid) {
  CUpti_Activity* r = nullptr;
  while (g_cupti.cuptiActivityGetNextRecord(const_cast<uint8_t*>(buf), valid, &r) == CUPTI_SUCCESS) {
    switch (r->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(r);
        rec::Kernel o{};
        o.start_ns = k->start;
        o.end_ns = k->end;
        o.correlation = k->correlationId;
        o.device = k->deviceId;
        o.stream = k->streamId;
        o.name = intern(k->name != nullptr ? k->name : "?");
        o.grid[0] = k->gridX;
        o.grid[1] = k->gridY;
        o.grid[2] = k->gridZ;
        o.block[0] = k->blockX;
        o.block[1] = k->blockY;
        o.block[2] = k->blockZ;
        o.registers = k->registersPerThread;
        o.static_smem = static_cast<uint32_t>(k->staticSharedMemory);
        o.dynamic_smem = static_cast<uint32_t>(k->dynamicSharedMemory);
        o.graph_id = k->graphId;
        o.graph_node_id = k->graphNodeId;
        append(rec::Type::kKernel, &o, sizeof o);
        ++end_.kernels;
        ++gpu_records_;
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(r);
        rec::Copy o = copyOf(m);
        o.copy_kind = m->copyKind;
        o.src_kind = m->srcKind;
        o.dst_kind = m->dstKind;
        append(rec::Type::kCopy, &o, sizeof o);
        ++gpu_records_;
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(r);
        rec::Copy o = copyOf(m);
        o.src_kind = static_cast<uint8_t>(m->memoryKind);
        o.is_memset = 1;
        append(rec::Type::kCopy, &o, sizeof o);
        ++gpu_records_;
        break;
      }
      case CUPTI_ACTIVITY_KIND_RUNTIME:
      case CUPTI_ACTIVITY_KIND_DRIVER: {
        auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(r);
        if (keep_api_ && !inWindow(a->start)) break;  // a call made while detached
        rec::Api o{};
        o.start_ns = a->start;
        o.end_ns = a->end;
        o.correlation = a->correlationId;
        o.tid = a->threadId;
        o.cbid = a->cbid;
        o.domain = static_cast<uint8_t>(r->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? rec::ApiDomain::kRuntime
                                                                               : rec::ApiDomain::kDriver);
        ApiName an = apiNameOf(static_cast<rec::ApiDomain>(o.domain), a->cbid);
        o.name = an.id;
        append(rec::Type::kApi, &o, sizeof o);
        if (an.launch) ++end_.launch_calls;
        break;
      }
      case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
        auto* s = reinterpret_cast<const CUpti_ActivitySynchronization2*>(r);
        rec::Sync o{};
        o.start_ns = s->start;
        o.end_ns = s->end;
        o.correlation = s->correlationId;
        o.type = static_cast<uint32_t>(s->type);
        o.stream = s->streamId;
        o.event = s->cudaEventId;
        append(rec::Type::kSync, &o, sizeof o);
        break;
      }
      case CUPTI_ACTIVITY_KIND_MARKER: {
        auto* m = reinterpret_cast<const CUpti_ActivityMarker2*>(r);
        uint32_t tid = m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? m->objectId.pt.threadId : 0;
        if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
          open_ranges_[m->id] = {m->timestamp, tid, intern(m->name != nullptr ? m->name : ""),
                                 intern(m->domain != nullptr ? m->domain : "")};
        } else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
          auto it = open_ranges_.find(m->id);
          if (it == open_ranges_.end()) {
            std::lock_guard<std::mutex> l(first_step_mu_);
            if (first_step_.pending && first_step_.tid == tid && m->timestamp >= first_step_.start_ns) {
              rec::Range o{first_step_.start_ns, m->timestamp, tid, intern(first_step_.name), 0, 0};
              append(rec::Type::kRange, &o, sizeof o);
              first_step_.pending = false;
            }
          } else {
            rec::Range o{it->second.start, m->timestamp, it->second.tid, it->second.name, it->second.domain, 0};
            append(rec::Type::kRange, &o, sizeof o);
            open_ranges_.erase(it);
          }
        }
        break;
      }
      case CUPTI_ACTIVITY_KIND_OVERHEAD: {
        auto* o3 = reinterpret_cast<const CUpti_ActivityOverhead3*>(r);
        rec::Overhead o{o3->start, o3->end, static_cast<uint32_t>(o3->overheadKind), 0};
        append(rec::Type::kOverhead, &o, sizeof o);
        break;
      }
      case CUPTI_ACTIVITY_KIND_DEVICE: {
        auto* d = reinterpret_cast<const CUpti_ActivityDevice5*>(r);
        rec::Device o{};
        o.id = d->id;
        o.sms = d->numMultiprocessors;
        o.cc_major = d->computeCapabilityMajor;
        o.cc_minor = d->computeCapabilityMinor;
        o.global_memory_bytes = d->globalMemorySize;
        o.name = intern(d->name != nullptr ? d->name : "");
        append(rec::Type::kDevice, &o, sizeof o);
        break;
      }
      default:
        break;
    }
  }
}

}  // namespace gpudoctor::recorder
