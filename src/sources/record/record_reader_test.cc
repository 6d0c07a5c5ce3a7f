// The recording reader on recordings made on an H200 (scripts/record/record_checks.sh), against
// counts from an independent reader (scripts/record/gdrec_dump.py), and on damaged copies.
#include "sources/record/record_reader.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

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
  auto clocks = readRecording(std::string(GPUDOCTOR_SOURCE_DIR) + "/testdata/fuzz_regressions/record_header_clock_overflow.gdrec");
  ASSERT_FALSE(clocks.ok());
  EXPECT_NE(clocks.message().find("clock times out of range"), std::string::npos) << clocks.message();
}

}  // namespace
}  // namespace gpudoctor
