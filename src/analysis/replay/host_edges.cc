// The host edges of one rank: each thread's calls in order with the host time between them kept
// (edited), hand-offs between threads, and the waits of calls that waited for GPU work (syncs, copies
// from pageable memory, a full launch queue), which the sync and copy edits may drop.
#include <algorithm>

#include "analysis/replay/graph.h"

namespace gpudoctor::replay_detail {

void RankBuilder::hostEdges() {
  // Calls by end, for hand-offs between threads.
  calls_by_end.resize(nc);
  for (uint32_t k = 0; k < nc; ++k) calls_by_end[k] = k;
  std::sort(calls_by_end.begin(), calls_by_end.end(), [&](uint32_t a, uint32_t b) { return g.endOf(a) < g.endOf(b); });
  launchQueue();
  // Host calls: thread order with the gaps kept; a call that waited for GPU work ends after it.
  for (uint32_t track = 0; track < tracks; ++track) callEdges(track);
}

void RankBuilder::callEdges(uint32_t track) {
  const std::vector<uint32_t>& list = g.calls_on_track[track];
  const std::vector<int64_t>* starts = nullptr;  // host events that show the thread working
  if (!g.work_starts[track].empty()) starts = &g.work_starts[track];
  const std::vector<int64_t>* steps = nullptr;
  if (!g.step_starts[track].empty()) steps = &g.step_starts[track];
  for (size_t k = 0; k < list.size(); ++k) {
    uint32_t c = list[k];
    const Event& e = g.ev(c);
    // The no-sync edit keeps the wait of the call that closes a step (the training loop's own
    // synchronize, or the profiler step's): it removes the syncs inside the step.
    bool closes_step = false;  // a thread without steps closes none
    if (steps) {
      auto next_step = std::upper_bound(steps->begin(), steps->end(), e.start_ns);
      int64_t boundary = next_step == steps->end() ? INT64_MAX : *next_step;
      closes_step = k + 1 == list.size() || g.startOf(list[k + 1]) >= boundary;
    }
    if (k == 0) {
      // A thread's first call follows the last call another thread ended before it (a thread
      // started inside the trace, autograd's backward thread), else keeps its traced time.
      int32_t from = otherThreadCallEndedBy(track, e.start_ns, INT64_MIN);
      if (from < 0) {
        const std::vector<int64_t>& hs = g.host_starts[track];
        if (!hs.empty() && hs.front() < e.start_ns)
          addHost(g.start(c), -1, kRootSpan, hs.front(), eventCount(track, hs.front(), e.start_ns));
        else
          addHost(g.start(c), -1, kRoot, e.start_ns);
      } else {
        addHost(g.start(c), static_cast<int32_t>(g.end(static_cast<uint32_t>(from))), kHostGap,
                g.endOf(static_cast<uint32_t>(from)),
                eventCount(track, g.endOf(static_cast<uint32_t>(from)), e.start_ns));
        ++st.thread_handoffs;
      }
    } else {
      const Event& p = g.ev(list[k - 1]);
      // A thread that idles (no host event recorded) until another thread's call ends was waiting
      // for that thread (autograd's backward thread, the main thread after backward): the longest
      // stretch of the gap that no host event covers, and the call of another thread that ended
      // last within it.
      int64_t hole_begin = p.end_ns(), wake = e.start_ns, hole = 0;
      if (starts) {
        const std::vector<int64_t>& ends = g.work_ends[track];
        size_t i = static_cast<size_t>(std::lower_bound(starts->begin(), starts->end(), p.end_ns()) - starts->begin());
        int64_t covered = p.end_ns();
        for (; i < starts->size() && (*starts)[i] < e.start_ns; ++i) {
          if ((*starts)[i] - covered > hole) hole = (*starts)[i] - covered, hole_begin = covered, wake = (*starts)[i];
          covered = std::max(covered, ends[i]);
        }
        if (e.start_ns - covered > hole) hole = e.start_ns - covered, hole_begin = covered, wake = e.start_ns;
      } else {
        hole = e.start_ns - p.end_ns();
      }
      int32_t from = hole > kHandoffIdleNs ? otherThreadCallEndedBy(track, wake, hole_begin) : -1;
      if (from < 0) {
        addHost(g.start(c), static_cast<int32_t>(g.end(list[k - 1])), kHostGap, p.end_ns(),
                eventCount(track, p.end_ns(), e.start_ns));
      } else {
        const Event& o = g.ev(static_cast<uint32_t>(from));
        g.splits.push_back({p.end_ns(), hole_begin, wake, e.start_ns, eventCount(track, p.end_ns(), hole_begin),
                            eventCount(track, wake, e.start_ns)});
        addHost(g.start(c), static_cast<int32_t>(g.end(list[k - 1])), kHostSplit, 0,
                static_cast<uint32_t>(g.splits.size() - 1));
        addHost(g.start(c), static_cast<int32_t>(g.end(static_cast<uint32_t>(from))), kHostGap, o.end_ns(),
                eventCount(track, o.end_ns(), e.start_ns));
        ++st.thread_handoffs;
      }
    }
    const int32_t waited = awaitedBy(c);
    if (waited < 0) {
      if (const int32_t slot = queueSlotAwaitedBy(c); slot >= 0) {
        // A launch into a full queue: it returns once the GPU finishes the work that frees a slot,
        // whatever the edit (the queue's depth does not change).
        const int64_t tail = e.end_ns() - std::max(e.start_ns, g.endOf(static_cast<uint32_t>(slot)));
        addHost(g.end(c), static_cast<int32_t>(g.start(c)), kSyncTail, tail, 0, kAlways);
        addHost(g.end(c), static_cast<int32_t>(g.end(static_cast<uint32_t>(slot))), kSyncAwait, tail, 0, kAlways);
        ++st.queue_waits;
        continue;
      }
      addHost(g.end(c), static_cast<int32_t>(g.start(c)), kCallDur, -1, c);
      continue;
    }
    // Waiting (always for the step's closing call, else unless the no-sync edit drops it).
    // A copy's wait: the call launched a copy from pageable memory, or the call before it on its
    // thread did, inside the same top-level operator (aten::to: cudaMemcpyAsync, then
    // cudaStreamSynchronize).
    bool copy = g.item_flags[c] & RankGraph::kLaunchesPageable;
    if (!copy && k > 0 && (g.item_flags[list[k - 1]] & RankGraph::kLaunchesPageable)) {
      const auto& ops = host_ops[track];
      auto op = std::upper_bound(ops.begin(), ops.end(), std::pair{e.start_ns, INT64_MAX});
      copy = op != ops.begin() && (--op)->first <= g.startOf(list[k - 1]) && e.end_ns() <= op->second;
    }
    const bool moe = !copy && (g.item_flags[c] & RankGraph::kInMoe);  // a per-expert dispatch's sync
    const uint8_t cond = closes_step ? kAlways : copy ? kIfCopyWaits : moe ? kIfMoeWaits : kIfWaits;
    int64_t we = g.endOf(static_cast<uint32_t>(waited));
    int64_t tail = e.end_ns() - std::max(e.start_ns, we);
    addHost(g.end(c), static_cast<int32_t>(g.start(c)), kSyncTail, tail, 0, cond);
    addHost(g.end(c), static_cast<int32_t>(g.end(static_cast<uint32_t>(waited))), kSyncAwait, tail, 0, cond);
    if (we > e.start_ns) ++st.sync_waits;
    if (!closes_step)  // the wait dropped: what the call took besides waiting
      addHost(g.end(c), static_cast<int32_t>(g.start(c)), kCallDur,
              std::max<int64_t>(0, std::min(e.end_ns(), we) - e.start_ns), c,
              copy  ? kIfNoCopyWaits
              : moe ? kIfNoMoeWaits
                    : kIfNoWaits);
  }
}

}  // namespace gpudoctor::replay_detail
