// The TraceReader seam: the registry, the Kineto probe (claims Kineto and Chrome-trace JSON, plain
// or gzip, refuses everything else), and the one clear error for a file no reader claims.
#include "sources/trace_reader.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "sources/kineto/kineto_trace_reader.h"
#include "sources/trace_set.h"

namespace gpudoctor {
namespace trace_reader_test {
std::string src(const std::string& rel) { return std::string(GPUDOCTOR_SOURCE_DIR) + "/" + rel; }

TEST(TraceReaders, RegistryListsKinetoAndNamesAreUnique) {
  auto readers = traceReaders();
  ASSERT_FALSE(readers.empty());
  EXPECT_EQ(readers[0], &kinetoTraceReader());
  EXPECT_EQ(readers[0]->name(), "kineto");
  std::set<std::string_view> names;
  for (const TraceReader* r : readers) {
    EXPECT_FALSE(r->description().empty()) << r->name();
    EXPECT_TRUE(names.insert(r->name()).second) << "two readers named " << r->name();
  }
}

TEST(KinetoProbe, ClaimsKinetoAndChromeTraceJson) {
  EXPECT_TRUE(looksLikeKinetoTrace("{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": ["));
  EXPECT_TRUE(looksLikeKinetoTrace("{\"traceEvents\": [{\"ph\": \"X\"}]}"));
  EXPECT_TRUE(looksLikeKinetoTrace("{\"displayTimeUnit\": \"ns\", \"traceEvents\": []}"));
  EXPECT_TRUE(looksLikeKinetoTrace("\xEF\xBB\xBF {\"traceEvents\": []}"));
  EXPECT_TRUE(looksLikeKinetoTrace("[{\"name\":\"a\",\"ph\":\"B\""));  // Chrome's JSON Array Format
  EXPECT_TRUE(looksLikeKinetoTrace(" [ \n"));                          // an array cut by the probe's window
  EXPECT_TRUE(looksLikeKinetoTrace("[]"));
}

TEST(KinetoProbe, RefusesOtherFiles) {
  EXPECT_FALSE(looksLikeKinetoTrace(""));
  EXPECT_FALSE(looksLikeKinetoTrace(" \n\t"));
  EXPECT_FALSE(looksLikeKinetoTrace("{\"name\": \"package.json\", \"version\": \"1.0.0\"}"));
  EXPECT_FALSE(looksLikeKinetoTrace("[1, 2, 3]"));
  EXPECT_FALSE(looksLikeKinetoTrace("NCCL INFO Bootstrap : Using eth0"));
  EXPECT_FALSE(looksLikeKinetoTrace(std::string("\x0d\xfc\xeb\xda\xc9\xb8\x00\x01", 8)));
  EXPECT_FALSE(looksLikeKinetoTrace("[gpu]\nname = \"H200\"\n"));  // TOML
}

TEST(TraceReaders, ProbeSeesTheDecompressedHead) {
  auto head = readTraceHead(src("examples/ddp_bf16_flash/bf16_flash_rank0.pt.trace.json.gz"), 256);
  ASSERT_TRUE(head.ok()) << head.error().message;
  EXPECT_EQ(head.value().size(), 256u);
  EXPECT_NE(head.value().find("\"schemaVersion\""), std::string::npos);
  auto r = pickTraceReader("x.json.gz", head.value());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value()->name(), "kineto");
  auto missing = readTraceHead("/nonexistent/trace.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("/nonexistent/trace.json"), std::string::npos);
}

TEST(TraceReaders, AForeignFileIsRefusedNamingItAndTheKnownFormats) {
  for (const char* rel :
       {"testdata/bad/garbage.bin", "testdata/bad/not_a_trace.json", "testdata/nccl_logs/ddp_2xh200_info.log"}) {
    auto r = readTrace(src(rel));
    ASSERT_FALSE(r.ok()) << rel;
    const std::string& m = r.error().message;
    EXPECT_EQ(m.rfind(src(rel), 0), 0u) << m;  // starts with the file
    EXPECT_NE(m.find("not a trace format gpudoctor reads"), std::string::npos) << m;
    EXPECT_NE(m.find("kineto: PyTorch profiler (Kineto)"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  auto empty = readTrace(src("testdata/bad/empty.json"));
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().message.find("empty.json: empty file (formats known: kineto"), std::string::npos)
      << empty.error().message;
}

// A second format, to show that the first reader whose probe claims a file reads it.
class FakeReader final : public TraceReader {
 public:
  std::string_view name() const override { return "fake"; }
  std::string_view description() const override { return "FAKE files"; }
  bool probe(std::string_view head, std::string_view path) const override {
    return head.substr(0, 4) == "FAKE" || path.ends_with(".fake");
  }
  Result<RankTrace> read(const std::string& path) const override { return Error{path + ": fake"}; }
};

TEST(TraceReaders, PicksTheFirstReaderThatClaimsTheFile) {
  FakeReader fake;
  const TraceReader* readers[] = {&kinetoTraceReader(), &fake};
  EXPECT_EQ(pickTraceReader("a.json", "FAKE 1", readers).value(), &fake);
  EXPECT_EQ(pickTraceReader("a.fake", "{\"traceEvents\": []}", readers).value(), &kinetoTraceReader());
  EXPECT_EQ(pickTraceReader("a.fake", "binary", readers).value(), &fake);
  auto none = pickTraceReader("a.bin", "binary", readers);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message,
            "a.bin: not a trace format gpudoctor reads (formats known: kineto: PyTorch profiler (Kineto) or "
            "Chrome-trace JSON, .json or .json.gz; fake: FAKE files)");
}

TEST(TraceReaders, ReadTraceSetGoesThroughTheRegistry) {
  auto ok = readTraceSet({src("testdata/kineto/fp32_naive_rank0.pt.trace.json.gz")});
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  auto bad = readTraceSet({src("testdata/kineto/fp32_naive_rank0.pt.trace.json.gz"), src("testdata/bad/garbage.bin")});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("garbage.bin: not a trace format"), std::string::npos) << bad.error().message;
}

}  // namespace trace_reader_test
}  // namespace gpudoctor
