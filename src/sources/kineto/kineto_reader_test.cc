// The reader on hand-written traces (every shape the format allows) and on damaged input: each
// bad input is one Error naming the file, never a crash.
#include "sources/kineto/kineto_reader.h"

#include <gtest/gtest.h>

#include <string>

namespace gpudoctor {
namespace kineto_reader_test {
Result<RankTrace> readText(const std::string& text, size_t chunk = 8u << 20) {
  auto in = ByteStream::fromMemory(text.data(), text.size(), "mem.json");
  KinetoReadOptions opt;
  opt.chunk_bytes = chunk;
  return readKinetoTrace(*in, "mem.json", opt);
}

const char* kSmall = R"json({
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150109880320, "numSms": 132,
                        "computeMajor": 9, "computeMinor": 0}],
  "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8, "nccl_version": "2.28.9"},
  "baseTimeNanoseconds": 1000000000000,
  "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#7", "pid": 1, "tid": 1, "ts": 10.5, "dur": 100},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 11.0004, "dur": 2.0005,
   "args": {"External id": 5, "correlation": 42}},
  {"ph": "s", "id": 42, "pid": 1, "tid": 1, "ts": 11, "cat": "ac2g", "name": "ac2g"},
  {"ph": "X", "cat": "kernel", "name": "void k<{lambda(int)#1}>(\"q\")", "pid": 0, "tid": 7, "ts": 20, "dur": 30,
   "args": {"device": 0, "stream": 7, "correlation": 42, "External id": 5}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", "pid": 0, "tid": 17,
   "ts": 40, "dur": 25, "args": {"correlation": 43, "Collective name": "allreduce", "In msg nelems": 1024,
   "Out msg nelems": 1024, "Group size": 8, "dtype": "Float", "Process Group Ranks": "[0, 1]"}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 60,
   "dur": 5, "args": {"bytes": 4096, "correlation": 44}},
  {"name": "thread_name", "ph": "M", "ts": 0, "pid": 0, "tid": 7, "args": {"name": "stream 7 "}},
  {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": 12,
   "args": {"Device Type": 1, "Device Id": 0, "Total Allocated": 123456}},
  {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": 13,
   "args": {"Device Type": 0, "Device Id": -1, "Total Allocated": 999999999}}
  ],
  "traceName": "x"
})json";

TEST(KinetoReader, ReadsEveryField) {
  auto r = readText(kSmall);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const RankTrace& t = r.value();
  EXPECT_EQ(t.rank, 3);
  EXPECT_EQ(t.world_size, 8);
  EXPECT_EQ(t.nccl_version, "2.28.9");
  ASSERT_EQ(t.devices.size(), 1u);
  EXPECT_EQ(t.devices[0].num_sms, 132);
  EXPECT_EQ(t.base_time_ns, 1000000000000);
  EXPECT_EQ(t.stats.json_events, 9u);
  EXPECT_EQ(t.stats.flow_events, 1u);
  EXPECT_EQ(t.stats.metadata_events, 1u);
  EXPECT_EQ(t.peak_allocated_bytes, 123456);  // host memory (Device Type 0) is not the GPU's
  EXPECT_EQ(t.peak_device, 0);
  ASSERT_EQ(t.events.size(), 5u);
  // Sorted by start; base time added; fractions exact to the nanosecond with rounding.
  EXPECT_EQ(t.events[0].start_ns, 1000000000000 + 10500);
  EXPECT_EQ(t.events[0].dur_ns, 100000);
  EXPECT_EQ(t.events[1].start_ns, 1000000000000 + 11000);  // 11.0004 us rounds down
  EXPECT_EQ(t.events[1].dur_ns, 2001);                     // 2.0005 us rounds half up
  EXPECT_EQ(t.events[1].kind, EventKind::kRuntimeCall);
  EXPECT_EQ(t.events[1].correlation, 42);
  EXPECT_EQ(t.events[2].kind, EventKind::kKernel);
  EXPECT_EQ(t.strings.view(t.events[2].name), "void k<{lambda(int)#1}>(\"q\")");
  EXPECT_TRUE(t.tracks[t.events[2].track].gpu);
  EXPECT_EQ(t.strings.view(t.tracks[t.events[2].track].label), "stream 7 ");
  const Event& nccl = t.events[3];
  ASSERT_GT(nccl.collective, 0u);
  const Collective& c = t.collectives[nccl.collective - 1];
  EXPECT_EQ(t.strings.view(c.coll_name), "allreduce");
  EXPECT_EQ(c.in_nelems, 1024);
  EXPECT_EQ(c.group_size, 8);
  EXPECT_EQ(t.events[4].kind, EventKind::kMemcpy);
  EXPECT_EQ(t.events[4].bytes, 4096);
}

// Kineto's "Record Window End" instant is kept (with the base time); ROCm traces are named as such
// and HIP's blocking calls and graph launches get the roles of their CUDA counterparts.
TEST(KinetoReader, RecordWindowEndAndRocmNames) {
  auto r = readText(R"json({"deviceProperties": [{"id": 0, "name": "AMD Instinct MI300X"}],
    "baseTimeNanoseconds": 5000,
    "traceEvents": [
    {"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel", "pid": 1, "tid": 1, "ts": 1, "dur": 2,
     "args": {"correlation": 1}},
    {"ph": "X", "cat": "cuda_runtime", "name": "hipStreamSynchronize", "pid": 1, "tid": 1, "ts": 4, "dur": 2},
    {"ph": "X", "cat": "cuda_runtime", "name": "hipGraphLaunch", "pid": 1, "tid": 1, "ts": 7, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 2, "dur": 3, "args": {"correlation": 1}},
    {"ph": "i", "cat": "cpu_instant_event", "name": "Record Window End", "pid": 1, "tid": 1, "ts": 40, "s": "t"}
    ]})json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const RankTrace& t = r.value();
  EXPECT_EQ(t.platform, "rocm");
  EXPECT_EQ(t.record_window_end_ns, 5000 + 40000);
  ASSERT_EQ(t.events.size(), 4u);
  EXPECT_TRUE(t.events[2].hasRole(kRoleSyncCall));  // hipStreamSynchronize at 4 us
  EXPECT_TRUE(t.events[3].hasRole(kRoleGraphLaunch));
  auto cuda = readText(kSmall);
  ASSERT_TRUE(cuda.ok());
  EXPECT_EQ(cuda.value().platform, "cuda");
  EXPECT_EQ(cuda.value().record_window_end_ns, INT64_MIN);
}

TEST(KinetoReader, SameResultForEveryChunkSize) {
  auto ref = readText(kSmall);
  ASSERT_TRUE(ref.ok());
  for (size_t chunk : {4096u, 4097u, 5000u, 65536u}) {
    auto r = readText(kSmall, chunk);
    ASSERT_TRUE(r.ok()) << chunk << ": " << r.error().message;
    ASSERT_EQ(r.value().events.size(), ref.value().events.size());
    for (size_t i = 0; i < ref.value().events.size(); ++i) {
      EXPECT_EQ(r.value().events[i].start_ns, ref.value().events[i].start_ns);
      EXPECT_EQ(r.value().events[i].dur_ns, ref.value().events[i].dur_ns);
    }
  }
}

TEST(KinetoReader, ManyEventsAcrossChunkBoundaries) {
  // Thousands of events with braces and escapes in names, read with a small chunk so that events
  // straddle refills at every possible offset.
  std::string text = "{\"traceEvents\": [";
  for (int i = 0; i < 3000; ++i) {
    if (i) text += ",\n";
    text += "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k{" + std::to_string(i) +
            "}\\\"\\\\\", \"pid\": 0, \"tid\": 7, \"ts\": " + std::to_string(i) + ".25, \"dur\": 0.5}";
  }
  text += "]}";
  for (size_t chunk : {4096u, 4099u, 10007u}) {
    auto r = readText(text, chunk);
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_EQ(r.value().events.size(), 3000u);
    EXPECT_EQ(r.value().events[2999].start_ns, 2999250);
    EXPECT_EQ(r.value().strings.view(r.value().events[5].name), "k{5}\"\\");
  }
}

TEST(KinetoReader, ChromeArrayFormatWithoutClosingBracket) {
  // Chrome's JSON Array Format allows the closing ']' to be missing; absolute integer-µs times.
  auto r = readText(R"json([{"name": "a", "ph": "B", "pid": "p", "tid": "t", "ts": 1690000000000000},
                        {"name": "a", "ph": "E", "pid": "p", "tid": "t", "ts": 1690000000000250},
                        {"name": "b", "ph": "X", "pid": 1, "tid": 2, "ts": 1690000000000100, "dur": 3})json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const RankTrace& t = r.value();
  ASSERT_EQ(t.events.size(), 2u);
  EXPECT_EQ(t.events[0].start_ns, 1690000000000000LL * 1000);
  EXPECT_EQ(t.events[0].dur_ns, 250000);
  EXPECT_EQ(t.events[0].kind, EventKind::kOther);
  EXPECT_EQ(t.strings.view(t.tracks[t.events[0].track].name), "p/t");
}

TEST(KinetoReader, Utf8BomAndKeysAfterEvents) {
  auto r = readText(
      "\xEF\xBB\xBF{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"x\", \"pid\": 0, \"tid\": 0, "
      "\"ts\": 1, \"dur\": 1}], \"baseTimeNanoseconds\": 5000}");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value().events[0].start_ns, 6000);  // base applied although it came after the events
}

void expectError(const std::string& text, const std::string& needle) {
  auto r = readText(text, 4096);
  ASSERT_FALSE(r.ok()) << "accepted: " << text.substr(0, 80);
  EXPECT_NE(r.error().message.find("mem.json"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find(needle), std::string::npos) << r.error().message;
}

TEST(KinetoReader, BadInputIsOneClearError) {
  expectError("", "empty file");
  expectError("   \n ", "empty file");
  expectError("hello", "not a JSON trace");
  expectError("{\"a\": 1}", "no trace events");
  expectError("{\"traceEvents\": []}", "no trace events");
  expectError("{\"traceEvents\": [1, 2]}", "not a JSON object");
  expectError("{\"traceEvents\": [{\"ph\": \"X\"} {\"ph\": \"X\"}]}", "expected ','");
  expectError("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": }]}", "invalid trace event JSON");
  expectError("{\"traceEvents\": [{\"ph\": \"X\"}", "truncated JSON");
  expectError("{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"abc", "truncated JSON");
  expectError("{\"deviceProperties\": [{\"id\": 0,", "truncated JSON");
  expectError("{\"baseTimeNanoseconds\": \"x\", \"traceEvents\": [{\"ph\": \"X\"}]}", "baseTimeNanoseconds");
  expectError(std::string("\x1f\x8b\x08\x00garbage", 11), "gzip");
}

TEST(KinetoReader, EveryTruncationOfARealTraceFailsCleanly) {
  // Cut the small trace at every byte: each prefix is either a clean error or (for a prefix that
  // happens to be a complete array) a valid read; never a crash.
  std::string text = kSmall;
  for (size_t n = 0; n < text.size(); ++n) {
    auto r = readText(text.substr(0, n), 4096);
    if (r.ok()) ADD_FAILURE() << "prefix of " << n << " bytes accepted";
  }
}

TEST(KinetoReader, MissingFileNamesIt) {
  auto r = readKinetoTrace("/nonexistent/dir/trace.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("/nonexistent/dir/trace.json"), std::string::npos);
}

}  // namespace kineto_reader_test
}  // namespace gpudoctor
