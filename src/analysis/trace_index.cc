#include "analysis/trace_index.h"

#include <algorithm>
#include <map>

#include "common/memory.h"

namespace gpudoctor {

std::vector<uint32_t>::const_iterator TraceIndex::firstStartingAt(const std::vector<uint32_t>& list, int64_t t) const {
  const auto& ev = trace->events;
  return std::lower_bound(list.begin(), list.end(), t, [&](uint32_t i, int64_t x) { return ev[i].start_ns < x; });
}

TraceIndex buildIndex(const RankTrace& t) {
  TraceIndex ix;
  ix.trace = &t;
  const auto& ev = t.events;
  ix.class_of_event.assign(ev.size(), KernelClass::kOther);
  std::vector<Span> all, compute, nccl, mcpy, mset, loader, optim, hsync, gwait;
  std::unordered_map<uint32_t, std::vector<Span>> sync_tracks;
  // Kernel names repeat: classify each (name, op, dtype) once.
  std::map<std::pair<uint32_t, uint64_t>, KernelClass> class_cache;
  reserveHuge(ix.gpu_work, ev.size() / 4);
  reserveHuge(ix.gpu_work_max_end, ev.size() / 4);
  reserveHuge(all, ev.size() / 4);
  for (uint32_t i = 0; i < ev.size(); ++i) {
    const Event& e = ev[i];
    switch (e.kind) {
      case EventKind::kHostOp:
        if (e.external_id >= 0) ix.op_of.add(e.external_id, i);
        break;
      case EventKind::kRuntimeCall:
      case EventKind::kDriverCall:
        if (e.correlation >= 0) {
          ix.launch_of.add(e.correlation, i);
          ix.launches.push_back(i);
        }
        break;
      case EventKind::kSyncEvent:
        if (t.tracks[e.track].gpu) gwait.push_back({e.start_ns, e.end_ns()});
        break;
      default:
        break;
    }
    // Roles come from the reader (sources/kineto/roles.cc for Kineto): no names are matched here.
    if (e.roles != 0) {
      if (e.hasRole(kRoleSyncCall)) {
        hsync.push_back({e.start_ns, e.end_ns()});
        sync_tracks[e.track].push_back({e.start_ns, e.end_ns()});
      }
      if (e.hasRole(kRoleStep)) {
        ix.step_annotations.push_back(i);
      } else if (e.hasRole(kRoleDataLoading)) {
        loader.push_back({e.start_ns, e.end_ns()});
        if (e.hasRole(kRoleLoaderInProcess)) ++ix.loader_in_process;
      } else if (e.hasRole(kRoleOptimizerStep)) {
        optim.push_back({e.start_ns, e.end_ns()});
      }
    }
    if (!isGpuWork(e.kind)) continue;
    ix.gpu_work.push_back(i);
    ix.gpu_work_max_end.push_back(
        std::max(e.end_ns(), ix.gpu_work_max_end.empty() ? e.end_ns() : ix.gpu_work_max_end.back()));
    if (e.correlation >= 0) ix.work_of.add(e.correlation, i);
    Span s{e.start_ns, e.end_ns()};
    all.push_back(s);
  }
  ix.op_of.build();
  ix.launch_of.build();
  ix.work_of.build();
  // Second pass over the GPU work: classes need the operator that launched each kernel.
  for (uint32_t i : ix.gpu_work) {
    const Event& e = ev[i];
    Span s{e.start_ns, e.end_ns()};
    if (e.kind == EventKind::kMemcpy) {
      mcpy.push_back(s);
      continue;
    }
    if (e.kind == EventKind::kMemset) {
      mset.push_back(s);
      continue;
    }
    std::string_view op, dtype;
    uint32_t op_ev = e.external_id >= 0 ? ix.op_of.find(e.external_id) : IdMap::kNone;
    std::pair<uint32_t, uint64_t> key{
        e.name, op_ev == IdMap::kNone ? ~uint64_t{0} : (uint64_t{ev[op_ev].name} << 32) | ev[op_ev].dtype};
    auto cached = class_cache.find(key);
    KernelClass kc;
    if (cached != class_cache.end()) {
      kc = cached->second;
    } else {
      if (op_ev != IdMap::kNone) {
        op = t.strings.view(ev[op_ev].name);
        dtype = t.strings.view(ev[op_ev].dtype);
      }
      kc = classifyKernel(t.strings.view(e.name), op, dtype);
      class_cache.emplace(key, kc);
    }
    ix.class_of_event[i] = kc;
    if (isCommunication(kc))
      nccl.push_back(s);
    else
      compute.push_back(s);
  }
  // Materialized attention is bmm + softmax + bmm: a trace with only one of them (an MoE router's
  // softmax, an einsum's bmm) has none, so those kernels get their ordinary class.
  {
    bool bmm = false, softmax = false;
    for (uint32_t i : ix.gpu_work) {
      if (ix.class_of_event[i] != KernelClass::kAttentionUnfused) continue;
      bool is_softmax = t.strings.view(ev[i].name).find("oftMax") != std::string_view::npos ||
                        t.strings.view(ev[i].name).find("softmax") != std::string_view::npos;
      (is_softmax ? softmax : bmm) = true;
    }
    if (!(bmm && softmax))
      for (uint32_t i : ix.gpu_work)
        if (ix.class_of_event[i] == KernelClass::kAttentionUnfused) {
          uint32_t op_ev = ev[i].external_id >= 0 ? ix.op_of.find(ev[i].external_id) : IdMap::kNone;
          std::string_view dtype = op_ev == IdMap::kNone ? std::string_view() : t.strings.view(ev[op_ev].dtype);
          ix.class_of_event[i] = classifyKernel(t.strings.view(ev[i].name), "", dtype);
        }
  }
  ix.all_gpu = IntervalSet::unionOf(std::move(all));
  ix.compute = IntervalSet::unionOf(std::move(compute));
  ix.nccl = IntervalSet::unionOf(std::move(nccl));
  ix.memcpy = IntervalSet::unionOf(std::move(mcpy));
  ix.memset = IntervalSet::unionOf(std::move(mset));
  ix.mem = ix.memcpy.unite(ix.memset);
  ix.kernels = ix.compute.unite(ix.nccl);
  ix.comm_overlap = ix.nccl.intersect(ix.compute);
  ix.dataloader = IntervalSet::unionOf(std::move(loader));
  ix.optimizer = IntervalSet::unionOf(std::move(optim));
  ix.host_sync = IntervalSet::unionOf(std::move(hsync));
  ix.gpu_wait = IntervalSet::unionOf(std::move(gwait));
  for (auto& [track, spans] : sync_tracks) ix.sync_by_track.emplace(track, IntervalSet::unionOf(std::move(spans)));
  return ix;
}

}  // namespace gpudoctor
