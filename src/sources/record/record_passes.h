// The record reader's passes after decoding: record_reader.cc decodes a recording's records into a
// DecodedRecording, these link and complete it (one concern per file): nested driver calls and
// shared correlation ids (correlations.cc), NCCL's calls given to its kernels (nccl_calls.cc), the
// launch calls (launches.cc), the steps (record_steps.cc).
#pragma once
#include <cstddef>
#include <cstdint>
#include <unordered_set>
#include <utility>
#include <vector>

#include "model/recording.h"
#include "model/trace.h"
#include "sources/record/periodic_steps.h"
#include "sources/record/record_reader.h"

namespace gpudoctor {

// What the decoder read, and what the passes add to it.
struct DecodedRecording {
  RankTrace tr;
  RecordingFacts facts;
  std::vector<recording::NcclCall> nccl_calls;
  std::vector<std::pair<int64_t, int64_t>> windows;  // attach windows (CUPTI ns), sorted before the passes
  std::unordered_set<size_t> bad_windows;            // windows whose calls share correlation ids
  std::vector<LaunchMark> launches;                  // every thread's, in start order
  uint32_t main_track = 0;                           // the thread that launches most: steps are drawn on it
  std::vector<uint32_t> step_events;
};

// An interval event of the recording (CUPTI times, before the base time is added).
inline Event& addRecordEvent(RankTrace& tr, EventKind k, uint64_t start, uint64_t end, uint32_t name, uint32_t track) {
  Event e;
  e.kind = k;
  e.start_ns = static_cast<int64_t>(start);
  e.dur_ns = static_cast<int64_t>(end - start);
  e.name = name;
  e.track = track;
  tr.events.push_back(e);
  return tr.events.back();
}

// Driver calls made inside a runtime call on the same thread (cudaMemcpy -> cuMemcpy...) are the
// runtime call's own work: dropped, their GPU work given the runtime call's correlation.
void dropNestedDriverCalls(DecodedRecording& d);

// CUPTI gives every API call its own correlation id, and the call's GPU work carries it. Seen on
// an H200 (CUDA 13.0, record --sample): after a late re-attach, thousands of calls of one window
// carried one id, so their GPU work cannot be told apart. Calls sharing an id, and the GPU work
// carrying it, are unlinked (correlation -1); a window where they are more than 1 % of the calls
// gives no steps (badWindow).
void unlinkSharedCorrelations(DecodedRecording& d);

// The attach window holding time t (d.windows sorted), or SIZE_MAX.
size_t windowOf(const DecodedRecording& d, int64_t t);
// Whether t falls in a window whose calls share correlation ids.
bool badWindow(const DecodedRecording& d, int64_t t);

// NCCL's own account of each collective (its NVTX payload: communicator, bytes) given to the NCCL
// kernel it launched: a kernel gets the calls its launching thread made after that thread's
// previous NCCL launch, up to its own launch call (one call, or the calls of an ncclGroup). The
// collective's bytes follow PyTorch's convention (the larger of input and output): NCCL gives
// allgather's sent and reducescatter's received bytes per rank, so those are multiplied by the
// communicator's size, known from ncclCommDestroy's payload or, with a single communicator, the
// recording's world size; unknown otherwise (0). The dtype is unknown (NCCL gives bytes only).
void attachNcclCalls(DecodedRecording& d);

// Every launch call with the GPU work it queued (the first kernel's or copy's name), in time
// order over all threads: PyTorch launches backward from autograd's thread, XLA from a pool, so
// one thread's launches are only part of the step's sequence. Launches during a stream capture
// queue no work (the graph replays it later) and are counted apart.
void countLaunches(DecodedRecording& d);

// Steps: NVTX ranges matching the pattern, else the launch period of the thread that launches most.
void findSteps(DecodedRecording& d);
// Said after the steps, whichever way they were found.
void noteBadWindows(DecodedRecording& d);

}  // namespace gpudoctor
