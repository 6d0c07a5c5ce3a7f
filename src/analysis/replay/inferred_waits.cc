// What the trace does not record, inferred from its timing: how soon work can follow its launch, the
// waits between streams that event record / wait calls imply, and the GPU work a host call waited for
// (its own copy, a sync's last work, a slot in a full launch queue).
#include <algorithm>
#include <map>

#include "analysis/breakdown.h"
#include "analysis/replay/graph.h"

namespace gpudoctor::replay_detail {

void RankBuilder::orderGpuWork() {
  // The smallest usual launch-to-start delay (10th percentile), from work launched onto an idle
  // device (the previous work on each of its streams ended before the launch): how soon work can follow
  // its launch. Onto an idle stream of a busy device, work waits in the device's queue: resnext50_fp32's
  // eight such launches on an H100, the queue full, started 40.2-40.5 ms after their calls, and that
  // delay as every launch's least held each kernel 40 ms behind its launch in every edited replay.
  std::vector<int64_t> delays;
  {
    // Each track's device (its process), as a slot: the latest end of the work seen on it so far.
    std::map<int64_t, size_t> slot_of_pid;
    std::vector<size_t> slot(tracks);
    for (size_t tr = 0; tr < tracks; ++tr)
      slot[tr] = slot_of_pid.try_emplace(t.tracks[tr].pid, slot_of_pid.size()).first->second;
    std::vector<int64_t> device_end(slot_of_pid.size(), INT64_MIN);
    for (uint32_t j = nc; j < g.items(); ++j) {
      int64_t& dev_end = device_end[slot[g.trackOf(j)]];
      if (const int32_t l = launchOf(j); l >= 0) {
        const int64_t sl = g.startOf(static_cast<uint32_t>(l));
        if (dev_end <= sl) delays.push_back(g.startOf(j) - sl);
      }
      dev_end = std::max(dev_end, g.endOf(j));
    }
  }
  launch_min = 0;
  if (!delays.empty()) {
    auto k = delays.begin() + static_cast<std::ptrdiff_t>(delays.size() / 10);
    std::nth_element(delays.begin(), k, delays.end());
    launch_min = std::max<int64_t>(0, *k);
  }
  // GPU work by end time, for sync waits and cross-stream waits.
  by_end.resize(g.ops.size());
  for (uint32_t k = 0; k < by_end.size(); ++k) by_end[k] = nc + k;
  std::sort(by_end.begin(), by_end.end(), [&](uint32_t a, uint32_t b) { return g.endOf(a) < g.endOf(b); });
  // The last-ending and the first-starting piece of GPU work of each launch call.
  last_own_op.assign(nc, -1), first_own_op.assign(nc, -1);
  for (uint32_t j = nc; j < g.items(); ++j) {
    int32_t l = launchOf(j);
    if (l < 0) continue;
    if (last_own_op[l] < 0 || g.endOf(static_cast<uint32_t>(last_own_op[l])) < g.endOf(j))
      last_own_op[l] = static_cast<int32_t>(j);
    if (first_own_op[l] < 0 || g.startOf(j) < g.startOf(static_cast<uint32_t>(first_own_op[l])))
      first_own_op[l] = static_cast<int32_t>(j);
  }
}

// Event waits, inferred from the host calls (Kineto records neither the stream nor the event of
// cudaEventRecord and cudaStreamWaitEvent): a wait issued on a thread since its last launch holds
// the thread's next launched work until the work launched last before the thread's latest event
// record ends, where the two ran on different streams of one device and the trace agrees (the
// waiting work started after that end). Under the profiler the host is often slower than these
// waits, so the trace's timing alone (the unexplained starts below) cannot show them; once the
// launches are free (CUDA graphs) they order the streams: cuDNN's LSTM runs its layers on streams
// that wait for each other every time step.
void RankBuilder::inferEventWaits() {
  std::vector<uint32_t> pending;
  for (const auto& on_track : g.calls_on_track) {
    int32_t last_launch = -1, recorded = -1;
    pending.clear();
    for (uint32_t c : on_track) {
      const Event& e = t.events[g.calls[c]];
      if (e.hasRole(kRoleEventRecord))
        recorded = last_launch >= 0 ? last_own_op[last_launch] : -1;
      else if (e.hasRole(kRoleStreamWait) && recorded >= 0)
        pending.push_back(static_cast<uint32_t>(recorded));
      if (first_own_op[c] < 0) continue;
      const uint32_t j = static_cast<uint32_t>(first_own_op[c]);
      for (uint32_t p : pending)
        if (g.trackOf(p) != g.trackOf(j) && t.tracks[g.trackOf(p)].pid == t.tracks[g.trackOf(j)].pid &&
            g.endOf(p) <= g.startOf(j) + kEventWaitToleranceNs)
          event_waits.push_back({j, p});
      pending.clear();
      last_launch = static_cast<int32_t>(c);
    }
  }
  std::sort(event_waits.begin(), event_waits.end());
  event_waits.erase(std::unique(event_waits.begin(), event_waits.end()), event_waits.end());
  st.event_waits += static_cast<int64_t>(event_waits.size());
}

// The position in by_end of the last GPU work ending at or before t_ns, or -1.
int64_t RankBuilder::lastEndingBy(int64_t t_ns) const {
  auto it =
      std::upper_bound(by_end.begin(), by_end.end(), t_ns, [&](int64_t v, uint32_t item) { return v < g.endOf(item); });
  return static_cast<int64_t>(it - by_end.begin()) - 1;
}

// The call of another thread than `track` that ended last at or before `by`, not before
// `not_before`; -1 when none.
int32_t RankBuilder::otherThreadCallEndedBy(uint32_t track, int64_t by, int64_t not_before) const {
  auto it = std::upper_bound(calls_by_end.begin(), calls_by_end.end(), by,
                             [&](int64_t v, uint32_t x) { return v < g.endOf(x); });
  for (int n = 0; it != calls_by_end.begin() && n < kCrossStreamScan; ++n) {
    uint32_t o = *--it;
    if (g.endOf(o) < not_before) break;
    if (g.trackOf(o) != track) return static_cast<int32_t>(o);
  }
  return -1;
}

// The GPU work a call waited for, or -1: its own copy when the copy finished inside the call
// (pageable memory, cudaMemcpy; a kernel finishing inside its launch call did not hold the call
// up, nor did a memset or a copy between pinned or device memory: an idle GPU, as under a
// host-bound profiler, runs them inside the call), and for a synchronizing call the work that
// ended last before it returned.
bool RankBuilder::mayHoldCall(const Event& op) const {
  if (op.kind != EventKind::kMemcpy) return false;
  const std::string_view name = t.strings.view(op.name);
  // Kineto names the memory kinds ("Memcpy HtoD (Pageable -> Device)"); without them, any copy.
  return name.find('(') == std::string_view::npos || isPageableCopy(name);
}

int32_t RankBuilder::awaitedBy(uint32_t c) const {
  const Event& e = g.ev(c);
  int32_t await = -1;
  if (int32_t own = last_own_op[c]; own >= 0 && mayHoldCall(g.ev(static_cast<uint32_t>(own)))) {
    const Event& oe = g.ev(static_cast<uint32_t>(own));
    // GPU copy ends are seen up to tens of microseconds after the call returns (pageable copies
    // on H200: 17 us); a call as long as half its copy that returns about when it ends waited.
    if (oe.end_ns() > e.start_ns && oe.end_ns() <= e.end_ns() + kCopyEndToleranceNs && 2 * e.dur_ns >= oe.dur_ns)
      await = own;
  }
  if (e.hasRole(kRoleSyncCall)) {
    int64_t p = lastEndingBy(e.end_ns() + kClockToleranceNs);
    if (p >= 0) {
      uint32_t k2 = by_end[static_cast<size_t>(p)];
      if (await < 0 || g.endOf(k2) > g.endOf(static_cast<uint32_t>(await))) await = static_cast<int32_t>(k2);
    }
  }
  return await;
}

void RankBuilder::launchQueue() {
  launch_starts.clear(), gpu_starts.clear();
  for (uint32_t w : by_end)  // each launched piece of work: when its call began, when it began
    if (const int32_t c = launchOf(w); c >= 0)
      launch_starts.push_back(g.startOf(static_cast<uint32_t>(c))), gpu_starts.push_back(g.startOf(w));
  std::sort(launch_starts.begin(), launch_starts.end());
  std::sort(gpu_starts.begin(), gpu_starts.end());
  // The queue's depth as the trace shows it: the 95th percentile of the work pending at each launch (the
  // host that fills the queue launches at that depth; a stray peak does not set it).
  std::vector<int64_t> pending;
  pending.reserve(launch_starts.size());
  for (int64_t at : launch_starts) pending.push_back(pendingAt(at));
  pending_full = 0;
  if (!pending.empty()) {
    auto q = pending.begin() + static_cast<std::ptrdiff_t>(pending.size() * 95 / 100);
    std::nth_element(pending.begin(), q, pending.end());
    pending_full = *q;
  }
}

int64_t RankBuilder::pendingAt(int64_t t_ns) const {
  const auto launched = std::upper_bound(launch_starts.begin(), launch_starts.end(), t_ns) - launch_starts.begin();
  const auto started = std::upper_bound(gpu_starts.begin(), gpu_starts.end(), t_ns) - gpu_starts.begin();
  return std::max<int64_t>(0, launched - started);
}

// A launch call that lasted far longer than a launch, or longer than one made into a full queue
// (kQueueWaitShortMinNs), and returned right after some GPU work ended waited for a slot in a full
// launch queue (the host ran ahead by the queue's depth): that work.
int32_t RankBuilder::queueSlotAwaitedBy(uint32_t c) const {
  const Event& e = g.ev(c);
  if (!(g.item_flags[c] & RankGraph::kOwnsWork) || (g.item_flags[c] & RankGraph::kGraphLaunch) ||
      e.dur_ns < kQueueWaitShortMinNs)
    return -1;
  const bool full = pending_full >= kQueueFullMinPending &&
                    static_cast<double>(pendingAt(e.start_ns)) >= kQueueFullShare * static_cast<double>(pending_full);
  if (e.dur_ns < kQueueWaitMinNs && !full) return -1;
  const int64_t p = lastEndingBy(e.end_ns() + kClockToleranceNs);
  if (p < 0) return -1;
  const uint32_t k2 = by_end[static_cast<size_t>(p)];
  return g.endOf(k2) > e.start_ns + std::min(e.dur_ns, kQueueWaitMinNs) / 2 ? static_cast<int32_t>(k2) : -1;
}

}  // namespace gpudoctor::replay_detail
