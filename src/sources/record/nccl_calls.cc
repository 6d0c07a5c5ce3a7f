#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "model/comm_kernels.h"
#include "sources/record/record_passes.h"

namespace gpudoctor {

namespace rec = recording;

namespace {

std::string_view ncclSchemaName(uint32_t s) {
  switch (static_cast<rec::NcclSchema>(s)) {
    case rec::NcclSchema::kAllGather:
      return "allgather";
    case rec::NcclSchema::kAllReduce:
      return "allreduce";
    case rec::NcclSchema::kBroadcast:
      return "broadcast";
    case rec::NcclSchema::kReduceScatter:
      return "reduce_scatter";
    case rec::NcclSchema::kReduce:
      return "reduce";
    case rec::NcclSchema::kSend:
      return "send";
    case rec::NcclSchema::kRecv:
      return "recv";
    case rec::NcclSchema::kAlltoAll:
      return "all_to_all";
    case rec::NcclSchema::kGather:
      return "gather";
    case rec::NcclSchema::kScatter:
      return "scatter";
    default:
      return "unknown";
  }
}

}  // namespace

void attachNcclCalls(DecodedRecording& d) {
  if (d.nccl_calls.empty()) return;
  std::unordered_map<uint64_t, int> comm_size;
  std::unordered_set<uint64_t> comms;
  std::unordered_map<uint32_t, std::vector<const rec::NcclCall*>> by_tid;
  for (const auto& c : d.nccl_calls) {
    if (rec::isNcclCommSizeSchema(c.schema) && c.arg > 0 && c.arg <= (1 << 24)) comm_size[c.comm] = c.arg;
    if (!rec::isNcclCollectiveSchema(c.schema)) continue;
    comms.insert(c.comm);
    by_tid[c.tid].push_back(&c);
  }
  for (auto& [tid, v] : by_tid)
    std::stable_sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->start_ns < b->start_ns; });
  // The launch call (thread, start) of each correlation.
  std::unordered_map<int64_t, std::pair<uint32_t, int64_t>> launch;
  for (const Event& e : d.tr.events)
    if ((e.kind == EventKind::kRuntimeCall || e.kind == EventKind::kDriverCall) && e.correlation >= 0 &&
        rec::isLaunchCall(d.tr.strings.view(e.name)))
      launch.try_emplace(e.correlation, static_cast<uint32_t>(d.tr.tracks[e.track].tid), e.start_ns);
  struct Kern {
    int64_t launch_ns;
    uint32_t event;
  };
  std::unordered_map<uint32_t, std::vector<Kern>> kernels;  // launching thread -> its NCCL kernels
  std::unordered_map<uint32_t, bool> is_nccl;
  for (uint32_t i = 0; i < d.tr.events.size(); ++i) {
    const Event& e = d.tr.events[i];
    if (e.kind != EventKind::kKernel || e.correlation < 0) continue;
    auto [n, fresh] = is_nccl.try_emplace(e.name, false);
    if (fresh) n->second = commKernelLibrary(d.tr.strings.view(e.name)) == "nccl";
    if (!n->second) continue;
    auto l = launch.find(e.correlation);
    if (l != launch.end()) kernels[l->second.first].push_back({l->second.second, i});
  }
  const int world = d.tr.world_size > 0 && comms.size() == 1 ? d.tr.world_size : -1;
  for (auto& [tid, ks] : kernels) {
    auto calls = by_tid.find(tid);
    if (calls == by_tid.end()) continue;
    std::sort(ks.begin(), ks.end(), [](const Kern& a, const Kern& b) { return a.launch_ns < b.launch_ns; });
    const auto& cs = calls->second;
    size_t next = 0;
    for (const Kern& k : ks) {
      size_t from = next;
      while (next < cs.size() && static_cast<int64_t>(cs[next]->start_ns) <= k.launch_ns) ++next;
      if (next == from) continue;  // a kernel NCCL launched without a call of its own in the window
      std::string kind;
      uint64_t comm = cs[from]->comm;
      int64_t bytes = 0;
      int n = -1;
      for (size_t j = from; j < next; ++j) {
        const rec::NcclCall& c = *cs[j];
        std::string_view k1 = ncclSchemaName(c.schema);
        kind = j == from ? std::string(k1) : (kind == k1 ? kind : std::string("grouped"));
        auto sz = comm_size.find(c.comm);
        int size = sz != comm_size.end() ? sz->second : world;
        if (c.comm != comm) comm = 0;
        n = j == from ? size : (n == size ? n : -1);
        bool per_rank = c.schema == static_cast<uint32_t>(rec::NcclSchema::kAllGather) ||
                        c.schema == static_cast<uint32_t>(rec::NcclSchema::kReduceScatter);
        if (bytes >= 0)
          bytes = per_rank ? (size > 0 ? bytes + static_cast<int64_t>(c.bytes) * size : -1)
                           : bytes + static_cast<int64_t>(c.bytes);
      }
      Collective col;
      col.coll_name = d.tr.strings.intern(kind);
      col.group_size = n;
      if (comm != 0) {
        char h[32];
        std::snprintf(h, sizeof h, "nccl:%016llx", static_cast<unsigned long long>(comm));
        col.process_group = col.pg_name = d.tr.strings.intern(h);
      }
      d.tr.collectives.push_back(col);
      Event& e = d.tr.events[k.event];
      e.collective = static_cast<uint32_t>(d.tr.collectives.size());
      e.bytes = std::max<int64_t>(0, bytes);
      ++d.facts.nccl_kernels_with_calls;
    }
  }
  d.facts.nccl_calls = 0;
  for (auto& [tid, v] : by_tid) d.facts.nccl_calls += v.size();
}

}  // namespace gpudoctor
