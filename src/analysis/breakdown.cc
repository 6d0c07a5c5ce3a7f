#include "analysis/breakdown.h"

#include "common/saturating.h"

#include <algorithm>
#include <cmath>

namespace gpudoctor {

std::string_view copyDirName(CopyDir d) {
  switch (d) {
    case CopyDir::kHtoD:
      return "HtoD";
    case CopyDir::kDtoH:
      return "DtoH";
    case CopyDir::kDtoD:
      return "DtoD";
    case CopyDir::kPtoP:
      return "PtoP";
    case CopyDir::kHtoH:
      return "HtoH";
    case CopyDir::kMemset:
      return "Memset";
    case CopyDir::kOther:
      return "other";
  }
  return "other";
}

DurationStats DurationStats::of(std::vector<int64_t>& v) {
  DurationStats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.count = static_cast<int64_t>(v.size());
  for (auto x : v) s.total_ns += x;
  s.min_ns = v.front();
  s.max_ns = v.back();
  // Nearest-rank percentiles: an observed value, no interpolation.
  auto rank = [&](double p) {
    return v[std::min(v.size() - 1, static_cast<size_t>(std::lround(p * static_cast<double>(v.size() - 1))))];
  };
  s.p50_ns = rank(0.5);
  s.p95_ns = rank(0.95);
  s.mean_ns = static_cast<double>(s.total_ns) / static_cast<double>(s.count);
  return s;
}

CopyDir copyDirOf(std::string_view name) {
  // "Memcpy HtoD (Pinned -> Device)"
  if (name.substr(0, 6) == "Memset") return CopyDir::kMemset;
  auto has = [&](std::string_view x) { return name.find(x) != std::string_view::npos; };
  if (has("HtoD")) return CopyDir::kHtoD;
  if (has("DtoH")) return CopyDir::kDtoH;
  if (has("DtoD")) return CopyDir::kDtoD;
  if (has("PtoP")) return CopyDir::kPtoP;
  if (has("HtoH")) return CopyDir::kHtoH;
  return CopyDir::kOther;
}

bool isPageableCopy(std::string_view name) { return name.find("Pageable") != std::string_view::npos; }

namespace {

// Time is clipped to the window; count and bytes go to the step where the copy starts, as for
// kernels, so summing steps counts each copy once.
void add(CopyStats& c, const Event& e, int64_t clipped, bool starts_here) {
  if (starts_here) {
    ++c.count;
    addSaturating(c.bytes, e.bytes);
  }
  c.dur_ns += clipped;
}

}  // namespace

StepBreakdown measureStep(const TraceIndex& idx, const StepWindow& w, std::vector<int64_t>* latencies) {
  const RankTrace& t = *idx.trace;
  StepBreakdown b;
  b.window = w;
  const int64_t wb = w.begin_ns, we = w.end_ns;
  b.wall_ns = we - wb;
  b.gpu_busy_ns = idx.all_gpu.lengthIn(wb, we);
  b.compute_ns = idx.compute.lengthIn(wb, we);
  b.comm_ns = idx.nccl.lengthIn(wb, we);
  b.comm_overlap_ns = idx.comm_overlap.lengthIn(wb, we);
  b.comm_exposed_ns = b.comm_ns - b.comm_overlap_ns;
  b.memcpy_ns = idx.memcpy.lengthIn(wb, we);
  b.memset_ns = idx.memset.lengthIn(wb, we);
  b.copy_exposed_ns = b.gpu_busy_ns - idx.kernels.lengthIn(wb, we);
  b.idle_ns = b.wall_ns - b.gpu_busy_ns;
  b.gpu_wait_ns = idx.gpu_wait.lengthIn(wb, we);
  b.dataloader_ns = idx.dataloader.lengthIn(wb, we);
  b.optimizer_ns = idx.optimizer.lengthIn(wb, we);
  b.sync_ns = idx.host_sync.lengthIn(wb, we);

  // Work in the window: GPU work overlapping it (copies), kernels starting in it (counts).
  const auto& ev = t.events;
  // Work that started before the window but runs into it is clipped in.
  size_t from =
      std::upper_bound(idx.gpu_work_max_end.begin(), idx.gpu_work_max_end.end(), wb) - idx.gpu_work_max_end.begin();
  auto scan_from = idx.gpu_work.begin() + static_cast<long>(from);
  for (auto it = scan_from; it != idx.gpu_work.end() && ev[*it].start_ns < we; ++it) {
    const Event& e = ev[*it];
    int64_t clipped = std::min(we, e.end_ns()) - std::max(wb, e.start_ns);
    if (clipped < 0) continue;
    bool starts_here = e.start_ns >= wb;
    if (e.kind == EventKind::kKernel) {
      if (starts_here) ++b.kernels;
      continue;
    }
    if (!starts_here && clipped == 0) continue;
    std::string_view name = t.strings.view(e.name);
    CopyDir d = e.kind == EventKind::kMemset ? CopyDir::kMemset : copyDirOf(name);
    add(b.copies[static_cast<int>(d)], e, clipped, starts_here);
    bool pageable = isPageableCopy(name);
    bool pinned = name.find("Pinned") != std::string_view::npos;
    if (d == CopyDir::kHtoD && pageable) add(b.pageable_htod, e, clipped, starts_here);
    if (d == CopyDir::kHtoD && pinned) add(b.pinned_htod, e, clipped, starts_here);
    if (d == CopyDir::kDtoH && pageable) add(b.pageable_dtoh, e, clipped, starts_here);
    if (d == CopyDir::kDtoH && pinned) add(b.pinned_dtoh, e, clipped, starts_here);
  }

  // Launch latency of the work launched inside the window.
  std::vector<int64_t> lat;
  auto l0 = idx.firstStartingAt(idx.launches, wb);
  for (auto it = l0; it != idx.launches.end() && ev[*it].start_ns < we; ++it) {
    const Event& call = ev[*it];
    uint32_t wk = idx.work_of.find(call.correlation);
    if (wk != IdMap::kNone) lat.push_back(ev[wk].start_ns - call.end_ns());
  }
  if (latencies) latencies->insert(latencies->end(), lat.begin(), lat.end());
  b.launch_latency = DurationStats::of(lat);

  // Idle gaps and their causes.
  IntervalSet busy = idx.all_gpu.clip(wb, we);
  int64_t cur = wb;
  auto classify_gap = [&](int64_t g0, int64_t g1) {
    int64_t len = g1 - g0;
    int64_t in_loader = idx.dataloader.lengthIn(g0, g1);
    // The GPU work that ends the gap decides: at g1, or for the gap that runs to the end of the
    // window, the first work after it (in the next step). Among work starting together, the one
    // launched first.
    int64_t next_start = g1;
    auto it = idx.firstStartingAt(idx.gpu_work, g1);
    if (g1 >= we) {
      if (it == idx.gpu_work.end()) {
        b.idle_other_ns += len;
        return;
      }
      next_start = ev[*it].start_ns;
    }
    const Event* call = nullptr;
    for (; it != idx.gpu_work.end() && ev[*it].start_ns == next_start; ++it) {
      uint32_t l = ev[*it].correlation < 0 ? IdMap::kNone : idx.launch_of.find(ev[*it].correlation);
      if (l == IdMap::kNone) continue;
      if (!call || ev[l].start_ns < call->start_ns) call = &ev[l];
    }
    if (!call) {
      b.idle_other_ns += len;
      return;
    }
    if (call->start_ns < g0) {
      b.idle_dependency_ns += len;
      return;
    }
    // From the moment the launching thread enters a blocking call (a sync, a synchronous copy) the
    // rest of the gap waits on it; before that the host was busy on its way to the launch.
    int64_t sync_from = g1;
    if (auto s = idx.sync_by_track.find(call->track); s != idx.sync_by_track.end()) {
      if (s->second.contains(g0)) {
        sync_from = g0;
      } else if (IntervalSet in_gap = s->second.clip(g0, g1); !in_gap.empty()) {
        sync_from = in_gap.spans().front().begin;
      }
    }
    const int64_t host_loader = sync_from == g1 ? in_loader : idx.dataloader.lengthIn(g0, sync_from);
    b.idle_sync_ns += g1 - sync_from;
    b.idle_sync_in_loader_ns += in_loader - host_loader;
    b.idle_host_ns += sync_from - g0;
    b.idle_host_in_loader_ns += host_loader;
  };
  std::vector<Span> gaps;
  for (const Span& s : busy.spans()) {
    if (s.begin > cur) gaps.push_back({cur, s.begin});
    cur = s.end;
  }
  if (cur < we) gaps.push_back({cur, we});
  for (const Span& g : gaps) classify_gap(g.begin, g.end);
  // The part of idle during which the host was fetching data: the loader on the critical path.
  b.idle_in_loader_ns = IntervalSet::unionOf(std::move(gaps)).intersect(idx.dataloader.clip(wb, we)).length();
  return b;
}

void accumulate(StepBreakdown& s, const StepBreakdown& b) {
  s.wall_ns += b.wall_ns;
  s.gpu_busy_ns += b.gpu_busy_ns;
  s.compute_ns += b.compute_ns;
  s.comm_ns += b.comm_ns;
  s.comm_overlap_ns += b.comm_overlap_ns;
  s.comm_exposed_ns += b.comm_exposed_ns;
  s.memcpy_ns += b.memcpy_ns;
  s.memset_ns += b.memset_ns;
  s.copy_exposed_ns += b.copy_exposed_ns;
  s.idle_ns += b.idle_ns;
  s.idle_host_ns += b.idle_host_ns;
  s.idle_sync_ns += b.idle_sync_ns;
  s.idle_dependency_ns += b.idle_dependency_ns;
  s.idle_other_ns += b.idle_other_ns;
  s.gpu_wait_ns += b.gpu_wait_ns;
  s.idle_in_loader_ns += b.idle_in_loader_ns;
  s.idle_host_in_loader_ns += b.idle_host_in_loader_ns;
  s.idle_sync_in_loader_ns += b.idle_sync_in_loader_ns;
  auto addc = [](CopyStats& x, const CopyStats& y) {
    x.count += y.count;
    addSaturating(x.bytes, y.bytes);  // a trace's byte counts are its own word
    x.dur_ns += y.dur_ns;
  };
  for (int i = 0; i < kCopyDirCount; ++i) addc(s.copies[i], b.copies[i]);
  addc(s.pageable_htod, b.pageable_htod);
  addc(s.pinned_htod, b.pinned_htod);
  addc(s.pageable_dtoh, b.pageable_dtoh);
  addc(s.pinned_dtoh, b.pinned_dtoh);
  s.kernels += b.kernels;
  s.dataloader_ns += b.dataloader_ns;
  s.optimizer_ns += b.optimizer_ns;
  s.sync_ns += b.sync_ns;
}

}  // namespace gpudoctor
