// For analysis tests: a RankTrace built by hand (one host thread, two GPU streams), ordered and
// given roles as the Kineto reader would, so analyses are tested on exact, known timelines.
#pragma once
#include <algorithm>
#include <string>
#include <string_view>

#include "model/trace.h"
#include "sources/kineto/roles.h"

namespace gpudoctor {

// Builds a RankTrace by hand: one host thread and two GPU streams (7: compute, 13: NCCL).
struct TraceBuilder {
  static constexpr uint32_t kHost = 0, kStream7 = 1, kStream13 = 2;
  RankTrace t;

  TraceBuilder() {
    t.path = "hand_built.json";
    t.tracks.push_back(Track{false, 100, 100, 0, 0});
    t.tracks.push_back(Track{true, 0, 7, 0, 0});
    t.tracks.push_back(Track{true, 0, 13, 0, 0});
  }
  void add(EventKind kind, uint32_t track, std::string_view name, int64_t begin, int64_t end, int64_t corr = -1,
           int64_t bytes = 0) {
    Event e;
    e.kind = kind;
    e.track = track;
    e.name = t.strings.intern(name);
    e.start_ns = begin;
    e.dur_ns = end - begin;
    e.correlation = corr;
    e.bytes = bytes;
    t.events.push_back(e);
  }
  void step(int n, int64_t b, int64_t e) { add(EventKind::kRange, kHost, "ProfilerStep#" + std::to_string(n), b, e); }
  // A launch call on the host and the GPU work it queued, linked by correlation id.
  void launch(int64_t corr, int64_t call_b, int64_t call_e, EventKind work_kind, uint32_t stream, std::string_view work,
              int64_t work_b, int64_t work_e, int64_t bytes = 0) {
    add(EventKind::kRuntimeCall, kHost, work_kind == EventKind::kKernel ? "cudaLaunchKernel" : "cudaMemcpyAsync",
        call_b, call_e, corr);
    add(work_kind, stream, work, work_b, work_e, corr, bytes);
  }
  // The model's order: by start, longer first; roles from the names, as the Kineto reader sets them.
  RankTrace done() {
    std::stable_sort(t.events.begin(), t.events.end(), [](const Event& a, const Event& b) {
      return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.dur_ns > b.dur_ns;
    });
    assignKinetoRoles(t);
    return std::move(t);
  }
};

}  // namespace gpudoctor
