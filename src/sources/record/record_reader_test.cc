// The recording reader on recordings made on an H200 (scripts/record/record_checks.sh), against
// counts from an independent reader (scripts/record/gdrec_dump.py), and on damaged copies.
#include "sources/record/record_reader.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "model/recording.h"
#include "sources/byte_stream.h"
#include "sources/trace_set.h"

namespace gpudoctor {
namespace {

std::string data(const std::string& name) { return std::string(GPUDOCTOR_SOURCE_DIR) + "/testdata/record/" + name; }

std::string inflate(const std::string& path) {
  auto in = ByteStream::open(path);
  EXPECT_TRUE(in.ok());
  std::string s;
  char buf[65536];
  for (;;) {
    auto n = in.value()->read(buf, sizeof buf);
    if (!n.ok() || n.value() == 0) break;
    s.append(buf, n.value());
  }
  return s;
}

size_t stepsOf(const RankTrace& t) { return t.step_marks.size(); }

TEST(RecordReader, CudaProgramEveryKernelAndStep) {
  // steps.cu 20 30 8: per step 30 launches, one graph of 8 kernels, 2 copies; the 8 launches made
  // while capturing the graph queue nothing.
  RecordingFacts f;
  auto t = readRecording(data("cuda_program.gdrec.gz"), &f);
  ASSERT_TRUE(t.ok()) << t.message();
  EXPECT_EQ(f.kernels, 760u);
  EXPECT_EQ(f.graph_kernels, 160u);
  EXPECT_EQ(f.launch_calls, 628u);
  EXPECT_EQ(f.graph_launches, 20u);
  EXPECT_EQ(f.captured_launches, 8u);
  EXPECT_EQ(f.launches_without_gpu_work, 0u);
  EXPECT_EQ(f.steps_from, "periodicity");
  EXPECT_EQ(f.steps, 19u);  // 20 steps ran; the last has no next boundary
  EXPECT_EQ(stepsOf(t.value()), 19u);
  EXPECT_EQ(t.value().platform, "cuda");
  ASSERT_EQ(t.value().devices.size(), 1u);
  EXPECT_NE(t.value().devices[0].name.find("H200"), std::string::npos);
  // Copies carry Kineto's names, so the pageable-copy finding sees them.
  bool pageable = false;
  for (const Event& e : t.value().events)
    pageable |= e.kind == EventKind::kMemcpy && t.value().strings.view(e.name) == "Memcpy HtoD (Pageable -> Device)";
  EXPECT_TRUE(pageable);
}

TEST(RecordReader, StepsFromTheLaunchPeriodAreContiguous) {
  RecordingFacts f;
  auto t = readRecording(data("torch_small.gdrec.gz"), &f);
  ASSERT_TRUE(t.ok()) << t.message();
  EXPECT_EQ(f.kernels, 1380u);
  EXPECT_EQ(f.launch_calls, 1380u);
  EXPECT_EQ(f.launches_without_gpu_work, 0u);
  ASSERT_EQ(f.steps, 9u) << f.steps_note;  // 2 warm-up + 8 timed steps, the last without a next boundary
  const RankTrace& r = t.value();
  for (size_t k = 0; k + 1 < r.step_marks.size(); ++k) {
    const Event& a = r.events[r.step_marks[k].event];
    const Event& b = r.events[r.step_marks[k + 1].event];
    EXPECT_EQ(a.end_ns(), b.start_ns);
    EXPECT_EQ(r.step_marks[k].number + 1, r.step_marks[k + 1].number);
    EXPECT_TRUE(a.hasRole(kRoleStep));
  }
  // Kernel names are demangled as Kineto writes them.
  bool demangled = false;
  for (const Event& e : r.events)
    demangled |= e.kind == EventKind::kKernel && r.strings.view(e.name).find("at::native::") != std::string_view::npos;
  EXPECT_TRUE(demangled);
}

// `record --sample 0.5/5` on an H200 (scripts/record/overhead_matrix.sh's sampled job), cut to the
// first 70 ms of each of its 4 attach windows by scripts/record/gdrec_trim.py; counts from
// gdrec_dump.py. Window 0 is start-up (no loop yet); in window 3 CUPTI gave thousands of calls one
// correlation id, so it is left out; windows 1 and 2 give steps, none across a gap.
TEST(RecordReader, SampledWindowsStepsOnlyInsideTrustworthyWindows) {
  RecordingFacts f;
  auto t = readRecording(data("torch_sampled.gdrec.gz"), &f);
  ASSERT_TRUE(t.ok()) << t.message();
  EXPECT_EQ(f.windows, 4u);
  EXPECT_EQ(f.kernels, 3971u);
  EXPECT_EQ(f.launch_calls, 3944u);
  EXPECT_EQ(f.untimed_gpu_records, 30u);  // 27 kernels and 3 copies in flight at a detach: start and end 0
  EXPECT_GT(f.shared_correlation_calls, 100u);
  EXPECT_EQ(f.steps_from, "periodicity");
  EXPECT_NE(f.steps_note.find("steps in 2 of 4 attach windows"), std::string::npos) << f.steps_note;
  EXPECT_NE(f.steps_note.find("1 attach window left out"), std::string::npos) << f.steps_note;
  const RankTrace& r = t.value();
  ASSERT_GE(r.step_marks.size(), 6u);
  // Each window's steps are contiguous; between the windows, 5 s of detached time is in no step.
  int64_t longest = 0;
  size_t gaps = 0;
  for (size_t k = 0; k < r.step_marks.size(); ++k) {
    const Event& a = r.events[r.step_marks[k].event];
    longest = std::max(longest, a.dur_ns);
    if (k + 1 < r.step_marks.size() && r.events[r.step_marks[k + 1].event].start_ns != a.end_ns()) ++gaps;
  }
  EXPECT_EQ(gaps, 1u);
  EXPECT_LT(longest, 25'000'000) << "a step spans a gap between windows";
  for (const Event& e : r.events) EXPECT_GT(e.start_ns, 1'000'000'000'000'000'000) << "an untimed record kept";
}

TEST(RecordReader, StepsFromNvtxRangesAndRanksFromTheLauncher) {
  RecordingFacts f;
  auto t = readRecording(data("torch_nvtx_steps.gdrec.gz"), &f);
  ASSERT_TRUE(t.ok()) << t.message();
  EXPECT_EQ(f.nvtx_step, "^train_step$");
  EXPECT_EQ(f.steps_from, "nvtx");
  EXPECT_EQ(f.steps, 8u);  // 2 warm-up + 6 steps, each in torch.cuda.nvtx.range_push("train_step")
  EXPECT_EQ(f.kernels, 1120u);
  auto r0 = readRecording(data("ddp/rank0.gdrec.gz"));
  auto r1 = readRecording(data("ddp/rank1.gdrec.gz"));
  ASSERT_TRUE(r0.ok() && r1.ok());
  EXPECT_EQ(r0.value().rank, 0);
  EXPECT_EQ(r1.value().rank, 1);
  EXPECT_EQ(r0.value().world_size, 2);
  auto set = readTraceSet({data("ddp/rank0.gdrec.gz"), data("ddp/rank1.gdrec.gz")}, {});
  ASSERT_TRUE(set.ok()) << set.message();
  EXPECT_EQ(set.value().size(), 2u);
}

// `record --steps 3-5 --nvtx-step '^train_step$'` on 2 + 6 NVTX steps of 130 kernels: attached
// from the start of step 3 to the start of step 6; step 3's range (whose push attached the
// recorder, so CUPTI recorded only its pop) is paired by the recorder.
TEST(RecordReader, StepWindowHoldsStepsNToM) {
  RecordingFacts f;
  auto t = readRecording(data("torch_steps_3_5.gdrec.gz"), &f);
  ASSERT_TRUE(t.ok()) << t.message();
  EXPECT_EQ(f.windows, 1u);
  EXPECT_EQ(f.kernels, 390u);  // 3 x 130, counted by gdrec_dump.py
  EXPECT_EQ(f.steps_from, "nvtx");
  EXPECT_EQ(f.steps, 3u);
}

// DDP over NCCL with one rank (one GPU): NCCL's NVTX payloads give every collective call (the
// counts and bytes gdrec_dump.py reads: 1 allgather, 1 broadcast, 15 allreduces of DDP's buckets),
// but NCCL runs no kernel of its own for one rank, so no kernel is given a call.
TEST(RecordReader, NcclCallsOfARealOneRankJob) {
  RecordingFacts f;
  auto t = readRecording(data("ddp_nccl_1rank.gdrec.gz"), &f);
  ASSERT_TRUE(t.ok()) << t.message();
  EXPECT_EQ(f.nccl_calls, 17u);
  EXPECT_EQ(f.nccl_kernels_with_calls, 0u);
  EXPECT_EQ(f.kernels, 1329u);
  EXPECT_TRUE(t.value().collectives.empty());
}

TEST(RecordReader, JaxGraphLaunchesAreSteps) {
  RecordingFacts f;
  auto t = readRecording(data("jax_small.gdrec.gz"), &f);
  ASSERT_TRUE(t.ok()) << t.message();
  EXPECT_EQ(f.kernels, 408u);
  EXPECT_EQ(f.graph_kernels, 384u);
  EXPECT_EQ(f.launch_calls, 36u);  // cuLaunchHostFunc calls are not kernel launches
  EXPECT_EQ(f.launches_without_gpu_work, 0u);
  EXPECT_EQ(f.steps, 11u) << f.steps_note;
}

TEST(RecordReader, DamagedFilesAreOneClearError) {
  const std::string good = inflate(data("profiler_first.gdrec.gz"));
  ASSERT_TRUE(readRecordingFromMemory(good.data(), good.size(), "x").ok());
  auto err = [](const std::string& bytes) {
    auto r = readRecordingFromMemory(bytes.data(), bytes.size(), "x.gdrec");
    return r.ok() ? std::string("(read)") : r.message();
  };
  EXPECT_NE(err(good.substr(0, good.size() - 5)).find("truncated"), std::string::npos);
  EXPECT_NE(err(good.substr(0, 30)).find("not a gpudoctor recording"), std::string::npos);
  EXPECT_NE(err("{\"traceEvents\": []}").find("not a gpudoctor recording"), std::string::npos);
  std::string v2 = good;
  v2[8] = 2;  // FileHeader::version
  EXPECT_NE(err(v2).find("format version 2"), std::string::npos);
  // Cut exactly before the end record: every record whole, no end.
  const size_t end_record = sizeof(recording::RecordHeader) + sizeof(recording::End);
  EXPECT_NE(err(good.substr(0, good.size() - end_record)).find("no end record"), std::string::npos);
  // A record whose size field is absurd.
  std::string huge = good;
  uint32_t size = 1u << 30;
  std::memcpy(huge.data() + sizeof(recording::FileHeader) + 4, &size, 4);
  EXPECT_NE(err(huge).find("corrupt record"), std::string::npos);
  // libFuzzer's find: header clocks whose difference overflowed (now refused).
  auto clocks = readRecording(std::string(GPUDOCTOR_SOURCE_DIR) +
                              "/testdata/fuzz_regressions/record_header_clock_overflow.gdrec");
  ASSERT_FALSE(clocks.ok());
  EXPECT_NE(clocks.message().find("clock times out of range"), std::string::npos) << clocks.message();
}

// A recording built in memory, record by record, as the recorder writes it.
class RecordingBytes {
 public:
  RecordingBytes(int rank, int world) {
    recording::FileHeader h{};
    std::memcpy(h.magic, recording::kMagic, sizeof h.magic);
    h.version = recording::kVersion;
    h.header_bytes = sizeof h;
    h.pid = 42;
    h.rank = rank;
    h.local_rank = rank;
    h.world_size = world;
    h.cupti_start_ns = 1000;
    h.realtime_start_ns = 1700000000000000000LL;
    bytes_.append(reinterpret_cast<const char*>(&h), sizeof h);
  }
  template <class T>
  void add(recording::Type t, const T& v, std::string_view tail = {}) {
    recording::RecordHeader rh{static_cast<uint16_t>(t), 0, static_cast<uint32_t>(sizeof(T) + tail.size())};
    bytes_.append(reinterpret_cast<const char*>(&rh), sizeof rh);
    bytes_.append(reinterpret_cast<const char*>(&v), sizeof(T));
    bytes_.append(tail);
  }
  uint32_t str(std::string_view s) {
    uint32_t id = ++strings_;
    add(recording::Type::kString, id, s);
    return id;
  }
  // A launch call on thread tid at t and the kernel it queued.
  void launch(uint32_t tid, uint64_t t, uint32_t call_name, uint32_t kernel_name) {
    ++corr_;
    recording::Api a{};
    a.start_ns = t;
    a.end_ns = t + 5000;
    a.correlation = corr_;
    a.tid = tid;
    a.name = call_name;
    a.domain = static_cast<uint8_t>(recording::ApiDomain::kRuntime);
    add(recording::Type::kApi, a);
    recording::Kernel k{};
    k.start_ns = t + 10000;
    k.end_ns = t + 60000;
    k.correlation = corr_;
    k.stream = 7;
    k.name = kernel_name;
    add(recording::Type::kKernel, k);
  }
  void nccl(uint32_t tid, uint64_t t, recording::NcclSchema s, uint64_t comm, uint64_t bytes, int arg = -1) {
    recording::NcclCall c{t, tid, static_cast<uint32_t>(s), comm, bytes, arg, -1};
    add(recording::Type::kNcclCall, c);
  }
  std::string finish() {
    recording::Window w{1000, 10000000};
    add(recording::Type::kWindow, w);
    recording::End e{};
    add(recording::Type::kEnd, e);
    return bytes_;
  }

 private:
  std::string bytes_;
  uint32_t strings_ = 0, corr_ = 0;
};

TEST(RecordReader, NcclPayloadsGiveKernelsTheirCollective) {
  using S = recording::NcclSchema;
  RecordingBytes b(1, 2);
  const uint32_t launch = b.str("cudaLaunchKernelExC");
  const uint32_t allreduce = b.str("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  const uint32_t allgather = b.str("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  const uint32_t gemm = b.str("sm90_xmma_gemm");
  // Main thread: an allreduce of 4 MiB, a grouped pair of allgathers (one kernel), a GEMM between.
  b.nccl(11, 100000, S::kAllReduce, 0xabc, 4 << 20, 0);
  b.launch(11, 100500, launch, allreduce);
  b.launch(11, 200000, launch, gemm);
  b.nccl(11, 300000, S::kAllGather, 0xabc, 1000);
  b.nccl(11, 300100, S::kAllGather, 0xabc, 3000);
  b.launch(11, 300500, launch, allgather);
  // An NCCL kernel whose call was not seen (before the window), and one on another thread.
  b.launch(11, 400000, launch, allreduce);
  b.nccl(12, 500000, S::kAllReduce, 0xabc, 64, 0);
  b.launch(12, 500100, launch, allreduce);
  std::string bytes = b.finish();
  RecordingFacts f;
  auto r = readRecordingFromMemory(bytes.data(), bytes.size(), "x.gdrec", &f);
  ASSERT_TRUE(r.ok()) << r.message();
  const RankTrace& t = r.value();
  EXPECT_EQ(f.nccl_calls, 4u);
  EXPECT_EQ(f.nccl_kernels_with_calls, 3u);
  std::vector<std::tuple<std::string, int64_t, int, std::string, int64_t>> seen;  // collective, bytes, n, group, seq
  size_t nccl_kernels = 0;
  for (const Event& e : t.events) {
    if (e.kind != EventKind::kKernel || t.strings.view(e.name).substr(0, 4) != "nccl") continue;
    ++nccl_kernels;
    EXPECT_TRUE(e.hasRole(kRoleCollective));
    if (e.collective == 0) continue;
    const Collective& c = t.collectives[e.collective - 1];
    seen.emplace_back(std::string(t.strings.view(c.coll_name)), e.bytes, c.group_size,
                      std::string(t.strings.view(c.process_group)), c.seq);
  }
  EXPECT_EQ(nccl_kernels, 4u);
  // One communicator and world size 2: its size is 2; allgather's per-rank bytes times 2.
  using Row = std::tuple<std::string, int64_t, int, std::string, int64_t>;
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0], Row("allreduce", 4 << 20, 2, "nccl:0000000000000abc", 0));
  EXPECT_EQ(seen[1], Row("allgather", 8000, 2, "nccl:0000000000000abc", 1));
  EXPECT_EQ(seen[2], Row("allreduce", 64, 2, "nccl:0000000000000abc", 2));
}

TEST(RecordReader, NcclCommunicatorSizesFromTheirPayloads) {
  using S = recording::NcclSchema;
  RecordingBytes b(0, 8);
  const uint32_t launch = b.str("cuLaunchKernelEx");
  const uint32_t rs = b.str("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  // Two communicators (so the world size says nothing of either); only 0x2's size is known.
  b.nccl(5, 100000, S::kReduceScatter, 0x1, 512, 0);
  b.launch(5, 100100, launch, rs);
  b.nccl(5, 200000, S::kReduceScatter, 0x2, 512, 0);
  b.launch(5, 200100, launch, rs);
  b.nccl(5, 900000, S::kCommDestroy, 0x2, 0, 4);
  std::string bytes = b.finish();
  auto r = readRecordingFromMemory(bytes.data(), bytes.size(), "x.gdrec");
  ASSERT_TRUE(r.ok()) << r.message();
  std::vector<std::pair<int64_t, int>> seen;
  for (const Event& e : r.value().events)
    if (e.collective != 0) seen.push_back({e.bytes, r.value().collectives[e.collective - 1].group_size});
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], (std::pair<int64_t, int>(0, -1)));    // size unknown: total bytes unknown
  EXPECT_EQ(seen[1], (std::pair<int64_t, int>(2048, 4)));  // 512 per rank x 4
  // A collective's byte count beyond 1 PiB is a corrupt record.
  RecordingBytes bad(0, 1);
  bad.nccl(5, 100000, S::kAllReduce, 0x1, 1ull << 60);
  std::string bb = bad.finish();
  auto e = readRecordingFromMemory(bb.data(), bb.size(), "bad.gdrec");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.message().find("corrupt NCCL call record"), std::string::npos) << e.message();
}

}  // namespace
}  // namespace gpudoctor
