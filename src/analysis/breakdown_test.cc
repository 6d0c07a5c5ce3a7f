#include "analysis/breakdown.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/ranks.h"
#include "analysis/run_analysis.h"
#include "analysis/steps.h"
#include "analysis/trace_builder_test_util.h"
#include "analysis/trace_index.h"
#include "model/run_summary.h"

namespace gpudoctor {
namespace breakdown_test {

// A run's notes less the one every hand-built trace gets: its steps last microseconds and hold a few
// kernels, too little to judge a training step by.
std::vector<std::string> otherNotes(const RunAnalysis& run) {
  std::vector<std::string> v;
  for (const auto& n : run.notes)
    if (n.find("too little to judge a training step") == std::string::npos) v.push_back(n);
  return v;
}

constexpr std::string_view kNcclName = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)";
constexpr std::string_view kLoaderName = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";

// Two steps that exercise every figure. Times in ns.
//
// Step 1, host [1000, 5000):
//   host:  DataLoader [1000,1300); launches L1 [1300,1400) L2 [1400,1450) L3 [1450,1480) L4 [1480,1490);
//          cudaStreamSynchronize [3200,3700) (corr 90, no GPU work); launch L5 [3700,3750)
//   s7:    K1 my_gemm [1500,2000)  M3 HtoD pageable [2500,2800) 4096 B  K4 my_gemm [3000,3400)  K5 my_gemm [3900,4200)
//   s13:   K2 nccl [1800,2600)
// Step 2, host [5000, 9000):
//   host:  launches L6 [5100,5200) L7 [5200,5300) L12 [6900,6950) L8 [8800,8900)
//   s7:    K7 my_gemm [5400,5900)  K11 my_gemm [6500,6700) (no launch record)  M12 DtoH pinned [7000,7200) 1024 B
//          K8 my_gemm [9100,9600) (launched in step 2, ends after its host range: the window grows to 9600)
//   s13:   K6 nccl [5300,6300)
RankTrace twoStepTrace() {
  TraceBuilder b;
  using K = EventKind;
  b.step(1, 1000, 5000);
  b.add(K::kRange, TraceBuilder::kHost, kLoaderName, 1000, 1300);
  b.launch(1, 1300, 1400, K::kKernel, TraceBuilder::kStream7, "my_gemm", 1500, 2000);
  b.launch(2, 1400, 1450, K::kKernel, TraceBuilder::kStream13, kNcclName, 1800, 2600);
  b.launch(3, 1450, 1480, K::kMemcpy, TraceBuilder::kStream7, "Memcpy HtoD (Pageable -> Device)", 2500, 2800, 4096);
  b.launch(4, 1480, 1490, K::kKernel, TraceBuilder::kStream7, "my_gemm", 3000, 3400);
  b.add(K::kRuntimeCall, TraceBuilder::kHost, "cudaStreamSynchronize", 3200, 3700, 90);
  b.launch(5, 3700, 3750, K::kKernel, TraceBuilder::kStream7, "my_gemm", 3900, 4200);

  b.step(2, 5000, 9000);
  b.launch(6, 5100, 5200, K::kKernel, TraceBuilder::kStream13, kNcclName, 5300, 6300);
  b.launch(7, 5200, 5300, K::kKernel, TraceBuilder::kStream7, "my_gemm", 5400, 5900);
  b.add(K::kKernel, TraceBuilder::kStream7, "my_gemm", 6500, 6700);
  b.launch(12, 6900, 6950, K::kMemcpy, TraceBuilder::kStream7, "Memcpy DtoH (Device -> Pinned)", 7000, 7200, 1024);
  b.launch(8, 8800, 8900, K::kKernel, TraceBuilder::kStream7, "my_gemm", 9100, 9600);
  return b.done();
}

// The identities every breakdown must satisfy, whatever the trace.
void expectIdentities(const StepBreakdown& s) {
  EXPECT_EQ(s.wall_ns, s.compute_ns + s.comm_exposed_ns + s.copy_exposed_ns + s.idle_ns);
  EXPECT_EQ(s.idle_ns, s.idle_host_ns + s.idle_sync_ns + s.idle_dependency_ns + s.idle_other_ns);
  EXPECT_EQ(s.comm_ns, s.comm_overlap_ns + s.comm_exposed_ns);
  EXPECT_EQ(s.gpu_busy_ns + s.idle_ns, s.wall_ns);
}

struct Measured {
  RankTrace trace;
  TraceIndex idx;
  std::vector<StepWindow> windows;
};

// The index points into the trace, so both live together (the trace is built first, then never moved).
void measure(Measured& m, const StepSelection& sel = {}) {
  m.idx = buildIndex(m.trace);
  auto w = findSteps(m.trace, m.idx, sel);
  ASSERT_TRUE(w.ok()) << w.error().message;
  m.windows = w.value();
}

TEST(Breakdown, StepWindowsTileTheTimeline) {
  Measured m{twoStepTrace(), {}, {}};
  measure(m);
  ASSERT_EQ(m.windows.size(), 2u);
  const auto& w1 = m.windows[0];
  const auto& w2 = m.windows[1];
  EXPECT_EQ(w1.number, 1);
  EXPECT_TRUE(w1.annotated);
  EXPECT_EQ(w1.begin_ns, 1000);
  EXPECT_EQ(w1.end_ns, 5000);  // where step 2 begins
  EXPECT_EQ(w1.end_ns, w2.begin_ns);
  EXPECT_EQ(w2.number, 2);
  EXPECT_EQ(w2.begin_ns, 5000);
  EXPECT_EQ(w2.cpu_end_ns, 9000);
  EXPECT_EQ(w2.end_ns, 9600);  // K8, launched at 8800 inside step 2, ends at 9600
}

TEST(Breakdown, StepOneExactFigures) {
  Measured m{twoStepTrace(), {}, {}};
  measure(m);
  ASSERT_EQ(m.windows.size(), 2u);
  std::vector<int64_t> lat;
  StepBreakdown s = measureStep(m.idx, m.windows[0], &lat);
  EXPECT_EQ(s.wall_ns, 4000);  // [1000, 5000)
  // Busy: [1500,2800) ∪ [3000,3400) ∪ [3900,4200) = 1300 + 400 + 300.
  EXPECT_EQ(s.gpu_busy_ns, 2000);
  EXPECT_EQ(s.compute_ns, 500 + 400 + 300);  // K1, K4, K5
  EXPECT_EQ(s.comm_ns, 800);                 // K2
  EXPECT_EQ(s.comm_overlap_ns, 200);         // K2 ∩ K1 = [1800,2000)
  EXPECT_EQ(s.comm_exposed_ns, 600);
  EXPECT_EQ(s.memcpy_ns, 300);
  EXPECT_EQ(s.memset_ns, 0);
  EXPECT_EQ(s.copy_exposed_ns, 200);  // M3 minus K2: [2600,2800)
  EXPECT_EQ(s.idle_ns, 2000);
  // Gaps: [1000,1500) next work K1 launched at 1300, after the gap began: host.
  //       [2800,3000) next work K4 launched at 1480, before the gap: dependency.
  //       [3400,3900) next work K5 launched at 3700 by a thread inside cudaStreamSynchronize at 3400: sync.
  //       [4200,5000) runs to the window's end; the next work (K6, next step) was launched at 5100,
  //       after the gap began: host.
  EXPECT_EQ(s.idle_host_ns, 500 + 800);
  EXPECT_EQ(s.idle_dependency_ns, 200);
  EXPECT_EQ(s.idle_sync_ns, 500);
  EXPECT_EQ(s.idle_other_ns, 0);
  EXPECT_EQ(s.kernels, 4);
  // Host side.
  EXPECT_EQ(s.dataloader_ns, 300);
  EXPECT_EQ(s.sync_ns, 500);
  EXPECT_EQ(s.optimizer_ns, 0);
  EXPECT_EQ(s.pageable_htod.count, 1);
  EXPECT_EQ(s.pageable_htod.bytes, 4096);
  EXPECT_EQ(s.pageable_htod.dur_ns, 300);
  EXPECT_EQ(s.pinned_htod.count, 0);
  EXPECT_EQ(s.copies[static_cast<int>(CopyDir::kHtoD)].bytes, 4096);
  EXPECT_EQ(s.copies[static_cast<int>(CopyDir::kDtoH)].count, 0);
  // Launch latency = GPU start − call end: L1 100, L2 350, L3 1020, L4 1510, L5 150; the sync call
  // (corr 90) queued no work and is not a sample.
  EXPECT_EQ(s.launch_latency.count, 5);
  EXPECT_EQ(s.launch_latency.total_ns, 3130);
  EXPECT_EQ(s.launch_latency.min_ns, 100);
  EXPECT_EQ(s.launch_latency.max_ns, 1510);
  EXPECT_EQ(s.launch_latency.p50_ns, 350);   // sorted [100,150,350,1020,1510], index round(0.5*4) = 2
  EXPECT_EQ(s.launch_latency.p95_ns, 1510);  // index round(0.95*4) = 4
  EXPECT_DOUBLE_EQ(s.launch_latency.mean_ns, 626.0);
  EXPECT_EQ(lat.size(), 5u);
  expectIdentities(s);
}

TEST(Breakdown, StepTwoExactFigures) {
  Measured m{twoStepTrace(), {}, {}};
  measure(m);
  ASSERT_EQ(m.windows.size(), 2u);
  StepBreakdown s = measureStep(m.idx, m.windows[1]);
  EXPECT_EQ(s.wall_ns, 4600);  // [5000, 9600)
  // Busy: [5300,6300) ∪ [6500,6700) ∪ [7000,7200) ∪ [9100,9600) = 1000 + 200 + 200 + 500.
  EXPECT_EQ(s.gpu_busy_ns, 1900);
  EXPECT_EQ(s.compute_ns, 500 + 200 + 500);  // K7, K11, K8
  EXPECT_EQ(s.comm_ns, 1000);                // K6
  EXPECT_EQ(s.comm_overlap_ns, 500);         // K7 runs entirely under K6
  EXPECT_EQ(s.comm_exposed_ns, 500);
  EXPECT_EQ(s.memcpy_ns, 200);
  EXPECT_EQ(s.copy_exposed_ns, 200);  // M12 overlaps no kernel
  EXPECT_EQ(s.idle_ns, 2700);
  // Gaps: [5000,5300) K6 launched at 5100: host. [6300,6500) K11 has no launch record: other.
  //       [6700,7000) M12 launched at 6900: host. [7200,9100) K8 launched at 8800: host.
  EXPECT_EQ(s.idle_host_ns, 300 + 300 + 1900);
  EXPECT_EQ(s.idle_other_ns, 200);
  EXPECT_EQ(s.idle_sync_ns, 0);
  EXPECT_EQ(s.idle_dependency_ns, 0);
  EXPECT_EQ(s.kernels, 4);
  EXPECT_EQ(s.dataloader_ns, 0);
  EXPECT_EQ(s.sync_ns, 0);
  EXPECT_EQ(s.pageable_htod.count, 0);
  EXPECT_EQ(s.pinned_dtoh.count, 1);
  EXPECT_EQ(s.pinned_dtoh.bytes, 1024);
  EXPECT_EQ(s.pinned_dtoh.dur_ns, 200);
  // L6 100, L7 100, L12 50, L8 200.
  EXPECT_EQ(s.launch_latency.count, 4);
  EXPECT_EQ(s.launch_latency.total_ns, 450);
  EXPECT_EQ(s.launch_latency.min_ns, 50);
  EXPECT_EQ(s.launch_latency.p50_ns, 100);
  EXPECT_EQ(s.launch_latency.p95_ns, 200);
  EXPECT_EQ(s.launch_latency.max_ns, 200);
  EXPECT_DOUBLE_EQ(s.launch_latency.mean_ns, 112.5);
  expectIdentities(s);
}

TEST(Breakdown, StepsSumToTheWholeSpan) {
  // Windows tile the timeline: the additive figures of the steps add up to one window over both.
  Measured m{twoStepTrace(), {}, {}};
  measure(m);
  ASSERT_EQ(m.windows.size(), 2u);
  StepBreakdown sum;
  for (const auto& w : m.windows) accumulate(sum, measureStep(m.idx, w));
  StepWindow whole;
  whole.begin_ns = m.windows.front().begin_ns;
  whole.end_ns = m.windows.back().end_ns;
  StepBreakdown all = measureStep(m.idx, whole);
  EXPECT_EQ(sum.wall_ns, all.wall_ns);
  EXPECT_EQ(sum.gpu_busy_ns, all.gpu_busy_ns);
  EXPECT_EQ(sum.compute_ns, all.compute_ns);
  EXPECT_EQ(sum.comm_ns, all.comm_ns);
  EXPECT_EQ(sum.comm_overlap_ns, all.comm_overlap_ns);
  EXPECT_EQ(sum.copy_exposed_ns, all.copy_exposed_ns);
  EXPECT_EQ(sum.idle_ns, all.idle_ns);
  EXPECT_EQ(sum.kernels, all.kernels);
  EXPECT_EQ(sum.wall_ns, 8600);
  EXPECT_EQ(sum.idle_ns, 4700);
  expectIdentities(sum);
  expectIdentities(all);
}

TEST(Breakdown, WorkStraddlingAWindowBoundaryIsSplitBetweenSteps) {
  // A kernel launched in step 1 that runs on into step 2: each step gets its own part.
  TraceBuilder b;
  b.step(1, 0, 1000);
  b.launch(1, 100, 200, EventKind::kKernel, TraceBuilder::kStream7, "my_gemm", 800, 1300);
  b.step(2, 1000, 2000);
  b.launch(2, 1100, 1200, EventKind::kKernel, TraceBuilder::kStream7, "my_gemm", 1500, 1700);
  Measured m{b.done(), {}, {}};
  measure(m);
  ASSERT_EQ(m.windows.size(), 2u);
  StepBreakdown s1 = measureStep(m.idx, m.windows[0]);
  StepBreakdown s2 = measureStep(m.idx, m.windows[1]);
  EXPECT_EQ(s1.compute_ns, 200);  // [800,1000)
  EXPECT_EQ(s1.kernels, 1);
  EXPECT_EQ(s1.idle_host_ns, 800);      // [0,800): launched at 100, after the gap began
  EXPECT_EQ(s2.compute_ns, 300 + 200);  // [1000,1300) and [1500,1700)
  EXPECT_EQ(s2.kernels, 1);             // a kernel counts in the step where it starts
  // [1300,1500): K2 launched at 1100, before the gap: dependency. [1700,2000): other.
  EXPECT_EQ(s2.idle_dependency_ns, 200);
  EXPECT_EQ(s2.idle_other_ns, 300);
  expectIdentities(s1);
  expectIdentities(s2);
}

TEST(Breakdown, FallbackWindowWithoutProfilerSteps) {
  TraceBuilder b;
  b.launch(1, 100, 200, EventKind::kKernel, TraceBuilder::kStream7, "my_gemm", 300, 700);
  b.launch(2, 200, 250, EventKind::kKernel, TraceBuilder::kStream13, kNcclName, 600, 1500);
  b.launch(3, 1600, 1650, EventKind::kKernel, TraceBuilder::kStream7, "my_gemm", 1700, 2000);
  Measured m{b.done(), {}, {}};
  // A selection cannot drop the fallback window: it has no step number.
  measure(m, StepSelection::parse("5").value());
  ASSERT_EQ(m.windows.size(), 1u);
  const auto& w = m.windows[0];
  EXPECT_FALSE(w.annotated);
  EXPECT_EQ(w.number, -1);
  EXPECT_EQ(w.begin_ns, 300);  // first GPU work
  EXPECT_EQ(w.end_ns, 2000);   // end of the last
  StepBreakdown s = measureStep(m.idx, w);
  EXPECT_EQ(s.wall_ns, 1700);
  EXPECT_EQ(s.compute_ns, 400 + 300);
  EXPECT_EQ(s.comm_ns, 900);
  EXPECT_EQ(s.comm_overlap_ns, 100);  // [600,700)
  EXPECT_EQ(s.comm_exposed_ns, 800);
  EXPECT_EQ(s.idle_ns, 200);       // [1500,1700)
  EXPECT_EQ(s.idle_host_ns, 200);  // launched at 1600, after the gap began
  expectIdentities(s);
}

TEST(Breakdown, GpuSideAnnotationsAreNotSteps) {
  // ProfilerStep#N projected onto a GPU stream must not create a second set of windows.
  TraceBuilder b;
  b.step(1, 0, 1000);
  b.add(EventKind::kGpuRange, TraceBuilder::kStream7, "ProfilerStep#1", 150, 900);
  b.launch(1, 100, 150, EventKind::kKernel, TraceBuilder::kStream7, "my_gemm", 150, 900);
  Measured m{b.done(), {}, {}};
  measure(m);
  ASSERT_EQ(m.windows.size(), 1u);
  EXPECT_EQ(m.windows[0].begin_ns, 0);
  EXPECT_EQ(m.windows[0].end_ns, 1000);
}

TEST(Steps, SelectionParse) {
  auto s = StepSelection::parse("2,4-6");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s.value().numbers, (std::vector<int64_t>{2, 4, 5, 6}));
  EXPECT_TRUE(s.value().keeps(5));
  EXPECT_FALSE(s.value().keeps(3));
  EXPECT_FALSE(s.value().keeps(7));

  auto one = StepSelection::parse("3");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one.value().numbers, (std::vector<int64_t>{3}));
  auto unsorted = StepSelection::parse("9,1-2");
  ASSERT_TRUE(unsorted.ok());
  EXPECT_EQ(unsorted.value().numbers, (std::vector<int64_t>{1, 2, 9}));
  // Empty and "all" keep everything.
  for (const char* all : {"", "all"}) {
    auto a = StepSelection::parse(all);
    ASSERT_TRUE(a.ok()) << all;
    EXPECT_TRUE(a.value().numbers.empty());
    EXPECT_TRUE(a.value().keeps(12345));
  }
}

TEST(Steps, SelectionParseRejectsBadInput) {
  for (const char* bad : {"x", "2-", "-2", "4-2", "2,,3", "2,", ",2", "1-2-3", "1.5", "0-2000000", " 3", "a-b"}) {
    auto s = StepSelection::parse(bad);
    EXPECT_FALSE(s.ok()) << "\"" << bad << "\" was accepted";
    if (!s.ok()) {
      EXPECT_NE(s.error().message.find("--steps"), std::string::npos) << s.error().message;
    }
  }
}

TEST(Steps, SelectionKeepsASubsetAndErrorsWhenItKeepsNone) {
  auto trace = twoStepTrace();
  TraceIndex idx = buildIndex(trace);
  auto w = findSteps(trace, idx, StepSelection::parse("2").value());
  ASSERT_TRUE(w.ok());
  ASSERT_EQ(w.value().size(), 1u);
  EXPECT_EQ(w.value()[0].number, 2);
  EXPECT_EQ(w.value()[0].end_ns, 9600);  // still the last step's extended end
  auto none = findSteps(trace, idx, StepSelection::parse("7").value());
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("keeps none"), std::string::npos) << none.error().message;
}

// One rank with one step; `durs` are the NCCL kernel durations in launch order.
RankTrace ncclRank(int rank, const std::vector<int64_t>& durs) {
  TraceBuilder b;
  b.t.rank = rank;
  b.step(1, 0, 100000);
  int64_t at = 1000;
  for (size_t i = 0; i < durs.size(); ++i) {
    int64_t corr = static_cast<int64_t>(i) + 1;
    b.launch(corr, at, at + 10, EventKind::kKernel, TraceBuilder::kStream13, kNcclName, at + 100, at + 100 + durs[i]);
    at += 10000;
  }
  return b.done();
}

TEST(Ranks, StragglerHasTheShortestNcclKernels) {
  // Rank 1 arrives last at every collective, so the others wait for it inside their NCCL
  // kernels and its own kernels are the shortest.
  std::vector<RankTrace> traces;
  traces.reserve(2);  // the indexes point into the traces: no reallocation
  traces.push_back(ncclRank(0, {1000, 1200, 900}));
  traces.push_back(ncclRank(1, {200, 300, 100}));
  std::vector<TraceIndex> idx;
  std::vector<std::vector<StepWindow>> windows;
  for (const auto& t : traces) {
    idx.push_back(buildIndex(t));
    auto w = findSteps(t, idx.back(), {});
    ASSERT_TRUE(w.ok());
    windows.push_back(w.value());
  }
  std::vector<RankWindows> rw{{&idx[0], &windows[0]}, {&idx[1], &windows[1]}};
  StragglerReport r = findStraggler(rw, {0, 1});
  ASSERT_TRUE(r.matched) << r.note;
  EXPECT_EQ(r.collectives, 3);
  EXPECT_EQ(r.straggler, 1) << r.note;
  EXPECT_DOUBLE_EQ(r.straggler_share, 1.0);
  ASSERT_EQ(r.ranks.size(), 2u);
  EXPECT_EQ(r.ranks[0].nccl_ns, 3100);
  EXPECT_EQ(r.ranks[0].wait_ns, 800 + 900 + 800);
  EXPECT_EQ(r.ranks[1].wait_ns, 0);
  EXPECT_EQ(r.ranks[1].last_arrivals, 3);
  EXPECT_EQ(r.others_wait_ns, 2500);

  // Different numbers of collectives cannot be matched.
  std::vector<RankTrace> uneven;
  uneven.reserve(2);
  uneven.push_back(ncclRank(0, {1000, 1200}));
  uneven.push_back(ncclRank(1, {200, 300, 100}));
  std::vector<TraceIndex> uidx{buildIndex(uneven[0]), buildIndex(uneven[1])};
  std::vector<std::vector<StepWindow>> uw{findSteps(uneven[0], uidx[0], {}).value(),
                                          findSteps(uneven[1], uidx[1], {}).value()};
  StragglerReport u = findStraggler({{&uidx[0], &uw[0]}, {&uidx[1], &uw[1]}}, {0, 1});
  EXPECT_FALSE(u.matched);
  EXPECT_EQ(u.straggler, -1);

  // One rank: nothing to compare.
  StragglerReport one = findStraggler({rw[0]}, {0});
  EXPECT_FALSE(one.matched);
  EXPECT_EQ(one.straggler, -1);
}

TEST(Ranks, NoStragglerWhenNobodyIsConsistentlyLast) {
  std::vector<RankTrace> traces;
  traces.reserve(2);
  traces.push_back(ncclRank(0, {100, 1000, 100, 1000}));
  traces.push_back(ncclRank(1, {1000, 100, 1000, 100}));
  std::vector<TraceIndex> idx{buildIndex(traces[0]), buildIndex(traces[1])};
  std::vector<std::vector<StepWindow>> w{findSteps(traces[0], idx[0], {}).value(),
                                         findSteps(traces[1], idx[1], {}).value()};
  StragglerReport r = findStraggler({{&idx[0], &w[0]}, {&idx[1], &w[1]}}, {0, 1});
  ASSERT_TRUE(r.matched);
  EXPECT_EQ(r.straggler, -1) << r.note;  // each rank is last half the time, below the 60% share
  EXPECT_DOUBLE_EQ(r.straggler_share, 0.5);
}

TEST(Ranks, TiedCollectivesHaveNoLastArrival) {
  // Rank 2 holds the first collective of each pair back; at the second all durations tie (copies
  // of one trace: nobody waited). The ties are nobody's last arrival (they went to rank 0, the first
  // of the tied, which then arrived "last" at half the collectives, as often as rank 2).
  std::vector<RankTrace> traces;
  traces.reserve(3);
  traces.push_back(ncclRank(0, {3000, 500, 3000, 500}));
  traces.push_back(ncclRank(1, {3000, 500, 3000, 500}));
  traces.push_back(ncclRank(2, {100, 500, 100, 500}));
  std::vector<TraceIndex> idx{buildIndex(traces[0]), buildIndex(traces[1]), buildIndex(traces[2])};
  std::vector<std::vector<StepWindow>> w;
  for (size_t k = 0; k < 3; ++k) w.push_back(findSteps(traces[k], idx[k], {}).value());
  StragglerReport r = findStraggler({{&idx[0], &w[0]}, {&idx[1], &w[1]}, {&idx[2], &w[2]}}, {0, 1, 2});
  ASSERT_TRUE(r.matched);
  EXPECT_EQ(r.straggler, 2) << r.note;
  EXPECT_DOUBLE_EQ(r.straggler_share, 1.0);
  EXPECT_EQ(r.ranks[0].last_arrivals, 0);
  EXPECT_EQ(r.ranks[2].last_arrivals, 2);
  EXPECT_NE(r.note.find("of the 2 collectives where a rank waited (4 matched)"), std::string::npos) << r.note;
  // All tied: no straggler, no share.
  std::vector<RankTrace> same;
  same.reserve(2);
  same.push_back(ncclRank(0, {500, 500}));
  same.push_back(ncclRank(1, {500, 500}));
  std::vector<TraceIndex> sidx{buildIndex(same[0]), buildIndex(same[1])};
  std::vector<std::vector<StepWindow>> sw{findSteps(same[0], sidx[0], {}).value(),
                                          findSteps(same[1], sidx[1], {}).value()};
  StragglerReport t = findStraggler({{&sidx[0], &sw[0]}, {&sidx[1], &sw[1]}}, {0, 1});
  ASSERT_TRUE(t.matched);
  EXPECT_EQ(t.straggler, -1);
  EXPECT_DOUBLE_EQ(t.straggler_share, 0.0);
}

// A step of 20 minutes is a corrupt timestamp, not a step: the figures stay, with a note that says so.
TEST(RunAnalysis, AnAbsurdStepLengthIsNoted) {
  TraceBuilder b;
  const int64_t twenty_min = 1'200'000'000'000;
  b.step(1, 0, twenty_min);
  b.launch(1, 100, 200, EventKind::kKernel, TraceBuilder::kStream7, "k", 300, 400);
  b.launch(2, twenty_min - 300, twenty_min - 200, EventKind::kKernel, TraceBuilder::kStream7, "k", twenty_min - 100,
           twenty_min - 50);
  std::vector<RankTrace> traces;
  traces.push_back(b.done());
  auto r = analyzeRun(traces, AnalysisOptions{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  bool noted = false;
  for (const auto& n : r.value().notes) noted |= n.find("step 1 lasts 1200 s: a timestamp") != std::string::npos;
  EXPECT_TRUE(noted);
}

// A trace of one kernel is a 20 ns "step": its figures stand, with a note that it is too little to
// judge a training step by. Twelve kernels in steps of 2 ms get no such note.
TEST(RunAnalysis, TooLittleToJudgeIsNoted) {
  TraceBuilder one;
  one.step(1, 0, 20);
  one.launch(1, 0, 5, EventKind::kKernel, TraceBuilder::kStream7, "k", 6, 20);
  std::vector<RankTrace> traces;
  traces.push_back(one.done());
  auto r = analyzeRun(traces, AnalysisOptions{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r.value().notes.size(), 1u);
  EXPECT_NE(r.value().notes[0].find("the trace: its 1 step(s) hold 1 kernel(s) in 0.000 ms: too little to judge"),
            std::string::npos)
      << r.value().notes[0];
  TraceBuilder many;
  for (int s = 0; s < 3; ++s) {
    const int64_t at = s * 2'000'000;
    many.step(s + 1, at, at + 2'000'000);
    for (int k = 0; k < 4; ++k)
      many.launch(s * 4 + k + 1, at + k * 1000, at + k * 1000 + 500, EventKind::kKernel, TraceBuilder::kStream7, "k",
                  at + 10'000 + k * 400'000, at + 10'000 + k * 400'000 + 300'000);
  }
  traces.clear();
  traces.push_back(many.done());
  auto m = analyzeRun(traces, AnalysisOptions{});
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_TRUE(otherNotes(m.value()) == m.value().notes);
}

TEST(RunAnalysis, TraceWithoutGpuWorkIsAnError) {
  TraceBuilder b;
  b.step(1, 0, 1000);
  b.add(EventKind::kHostOp, TraceBuilder::kHost, "aten::add", 100, 200);
  std::vector<RankTrace> traces;
  traces.push_back(b.done());
  auto r = analyzeRun(traces, AnalysisOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("no GPU activity"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("hand_built.json"), std::string::npos) << r.error().message;
}

// Among several ranks, one without GPU activity (a CPU-only process of the job) is reported and left
// out; the others are analyzed. Only when no rank has GPU work is it an error (above).
TEST(RunAnalysis, ARankWithoutGpuWorkIsLeftOutAndNamed) {
  std::vector<RankTrace> traces;
  traces.push_back(twoStepTrace());
  traces.back().rank = 0;
  TraceBuilder b;
  b.t.path = "cpu_only.json";
  b.step(1, 0, 1000);
  b.add(EventKind::kHostOp, TraceBuilder::kHost, "aten::add", 100, 200);
  traces.push_back(b.done());
  traces.back().rank = 1;
  auto r = analyzeRun(traces, AnalysisOptions{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r.value().ranks.size(), 1u);
  EXPECT_EQ(r.value().ranks[0].trace->rank, 0);
  EXPECT_EQ(r.value().ranks[0].total.wall_ns, 4000 + 4600);  // as alone
  ASSERT_EQ(r.value().left_out.size(), 1u);
  EXPECT_EQ(r.value().left_out[0].rank, 1);
  EXPECT_EQ(r.value().left_out[0].path, "cpu_only.json");
  const auto notes = otherNotes(r.value());
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("rank 1 (cpu_only.json) left out"), std::string::npos) << notes[0];
}

// A last step annotation that outlives the recording ends at the last recorded event (or Kineto's
// Record Window End, if later); the cut is noted. Earlier steps are untouched.
TEST(Steps, ALastStepOutlivingTheRecordingIsClipped) {
  Measured m;
  {
    RankTrace t = twoStepTrace();
    for (auto& e : t.events)  // step 2 ends 13 s after everything else
      if (e.hasRole(kRoleStep) && e.start_ns == 5000) e.dur_ns = 13'000'000'000;
    m.trace = std::move(t);
  }
  measure(m);
  ASSERT_EQ(m.windows.size(), 2u);
  EXPECT_EQ(m.windows[0].clipped_ns, 0);
  EXPECT_EQ(m.windows[1].cpu_end_ns, 9600);  // the last GPU work's end
  EXPECT_EQ(m.windows[1].end_ns, 9600);
  EXPECT_EQ(m.windows[1].clipped_ns, 5000 + 13'000'000'000 - 9600);
  // Kineto's marker, later than every event, is where the recording ended.
  m.trace.record_window_end_ns = 12000;
  measure(m);
  EXPECT_EQ(m.windows[1].cpu_end_ns, 12000);
  EXPECT_EQ(m.windows[1].end_ns, 12000);
  // The untouched trace is not clipped.
  Measured plain{twoStepTrace(), {}, {}};
  measure(plain);
  EXPECT_EQ(plain.windows[1].clipped_ns, 0);
  EXPECT_EQ(plain.windows[1].cpu_end_ns, 9000);
}

// The step the last prof.step() opens holds only what runs after training (a checkpoint save, a
// sleep): no launches, no GPU work. It is left out and noted; a step without GPU work in the middle
// of the steps stays (the GPU really was idle through it).
TEST(Steps, EdgeStepsWithoutGpuWorkAreLeftOut) {
  TraceBuilder b;
  using K = EventKind;
  b.step(1, 0, 1000);
  b.add(K::kHostOp, TraceBuilder::kHost, "aten::empty", 100, 200);
  b.step(2, 1000, 2000);
  b.launch(1, 1100, 1150, K::kKernel, TraceBuilder::kStream7, "my_gemm", 1200, 1800);
  b.step(3, 2000, 3000);  // idle in the middle: kept
  b.step(4, 3000, 4000);
  b.launch(2, 3100, 3150, K::kKernel, TraceBuilder::kStream7, "my_gemm", 3200, 3900);
  b.step(5, 4000, 2'004'000);  // the stray one
  b.add(K::kHostOp, TraceBuilder::kHost, "aten::save", 5000, 2'003'000);
  std::vector<RankTrace> traces;
  traces.push_back(b.done());
  auto r = analyzeRun(traces, AnalysisOptions{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  const RankAnalysis& ra = r.value().ranks[0];
  ASSERT_EQ(ra.windows.size(), 3u);
  EXPECT_EQ(ra.windows.front().number, 2);
  EXPECT_EQ(ra.windows.back().number, 4);
  EXPECT_EQ(ra.windows.back().end_ns, 4000);
  ASSERT_EQ(ra.coverage.dropped.size(), 2u);
  EXPECT_EQ(ra.coverage.dropped[0].number, 1);
  EXPECT_EQ(ra.coverage.dropped[1].number, 5);
  EXPECT_EQ(ra.coverage.dropped[1].host_ns, 2'000'000);
  EXPECT_EQ(ra.total.wall_ns, 3000);
  const auto notes = otherNotes(r.value());
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[1].find("ProfilerStep#5 left out: it launches and runs no GPU work (2.000 ms"), std::string::npos)
      << notes[1];
}

// GPU work before the first or after the last annotated step is in no step; it is counted and noted.
TEST(Steps, GpuWorkOutsideTheStepsIsCounted) {
  TraceBuilder b;
  using K = EventKind;
  b.launch(1, 100, 150, K::kKernel, TraceBuilder::kStream7, "eval_gemm", 200, 700);  // before step 1
  b.step(1, 1000, 2000);
  b.launch(2, 1100, 1150, K::kKernel, TraceBuilder::kStream7, "my_gemm", 1200, 1800);
  b.add(K::kHostOp, TraceBuilder::kHost, "aten::add", 2500, 2600);
  b.launch(3, 2600, 2650, K::kKernel, TraceBuilder::kStream7, "eval_gemm", 2700, 2900);  // after it
  std::vector<RankTrace> traces;
  traces.push_back(b.done());
  auto r = analyzeRun(traces, AnalysisOptions{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  const RankAnalysis& ra = r.value().ranks[0];
  EXPECT_EQ(ra.coverage.gpu_outside_ops, 2);
  EXPECT_EQ(ra.coverage.gpu_outside_ns, 500 + 200);
  EXPECT_EQ(ra.coverage.gpu_before_ns, 500);
  EXPECT_EQ(ra.total.compute_ns, 600);
  const auto notes = otherNotes(r.value());
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("2 GPU operations (0.001 ms of GPU time, 0.001 ms of it before"), std::string::npos)
      << notes[0];
}

// DeepEP's dispatch/combine (communication as CUDA kernels over NVSHMEM, no NCCL) is communication:
// exposed where no compute kernel runs beside it, overlapped where one does.
TEST(Breakdown, NonNcclCommunicationKernelsAreCommunication) {
  TraceBuilder b;
  using K = EventKind;
  b.step(1, 0, 10000);
  b.launch(1, 100, 150, K::kKernel, TraceBuilder::kStream7, "my_gemm", 200, 2200);
  b.launch(2, 150, 200, K::kKernel, TraceBuilder::kStream13, "void deep_ep::intranode::dispatch<8, 768, 8192>(int4*)",
           1200, 6200);
  b.launch(3, 200, 250, K::kKernel, TraceBuilder::kStream7, "void deep_ep::intranode::combine<8>(int4*)", 6500, 8500);
  std::vector<RankTrace> traces;
  traces.push_back(b.done());
  auto r = analyzeRun(traces, AnalysisOptions{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  const StepBreakdown& s = r.value().ranks[0].total;
  EXPECT_EQ(s.compute_ns, 2000);
  EXPECT_EQ(s.comm_ns, 5000 + 2000);
  EXPECT_EQ(s.comm_overlap_ns, 1000);
  EXPECT_EQ(s.comm_exposed_ns, 4000 + 2000);
  expectIdentities(s);
}

TEST(RunAnalysis, TotalsAreTheSumOfTheSteps) {
  std::vector<RankTrace> traces;
  traces.push_back(twoStepTrace());
  AnalysisOptions opt;
  opt.threads = 1;
  auto r = analyzeRun(traces, opt);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r.value().ranks.size(), 1u);
  const RankAnalysis& ra = r.value().ranks[0];
  ASSERT_EQ(ra.steps.size(), 2u);
  EXPECT_EQ(ra.total.wall_ns, 4000 + 4600);
  EXPECT_EQ(ra.total.idle_host_ns, 500 + 800 + 2500);
  EXPECT_EQ(ra.total.idle_other_ns, 200);
  EXPECT_EQ(ra.total.window.begin_ns, 1000);
  EXPECT_EQ(ra.total.window.end_ns, 9600);
  EXPECT_EQ(ra.total.launch_latency.count, 9);  // over both steps
  EXPECT_EQ(ra.total.launch_latency.total_ns, 3130 + 450);
  expectIdentities(ra.total);
  EXPECT_FALSE(r.value().straggler.matched);  // one rank
}

}  // namespace breakdown_test
}  // namespace gpudoctor

namespace gpudoctor {
namespace breakdown_test {

// Collectives of one type and size in two process groups (a data-parallel and a tensor-parallel
// group) are two rows, each naming its group; compare matches them by that key.
TEST(Collectives, OneRowPerProcessGroup) {
  TraceBuilder b;
  b.step(1, 0, 100'000);
  auto coll = [&](int64_t corr, int64_t s, const char* pg) {
    b.launch(corr, s, s + 1'000, EventKind::kKernel, TraceBuilder::kStream13,
             "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(x)", s + 2'000, s + 12'000);
    Collective c;
    c.coll_name = b.t.strings.intern("allreduce");
    c.dtype = b.t.strings.intern("BFloat16");
    c.in_nelems = c.out_nelems = 1024;
    c.group_size = 2;
    c.pg_name = b.t.strings.intern(pg);
    c.process_group = c.pg_name;
    b.t.collectives.push_back(c);
    b.t.events.back().collective = static_cast<uint32_t>(b.t.collectives.size());
  };
  coll(1, 10'000, "dp");
  coll(2, 30'000, "tp");
  coll(3, 50'000, "tp");
  std::vector<RankTrace> traces;
  traces.push_back(b.done());
  auto run = analyzeRun(traces, {});
  ASSERT_TRUE(run.ok()) << run.message();
  const auto& cs = run.value().collectives;
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_EQ(cs[0].process_group, "tp");  // by total time
  EXPECT_EQ(cs[0].dur.count, 2);
  EXPECT_EQ(cs[1].process_group, "dp");
  EXPECT_EQ(cs[1].bytes, 2048);
  EXPECT_EQ(collectiveKey(cs[0].collective, cs[0].dtype, cs[0].bytes, cs[0].process_group),
            "allreduce BFloat16 2048 B group tp");
}

}  // namespace breakdown_test
}  // namespace gpudoctor
