#include "sources/summary/summary_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/atomic_file.h"
#include "sources/byte_stream.h"

namespace gpudoctor {
namespace summary_file_test {
namespace fs = std::filesystem;

RankDigest sample(int r) {
  RankDigest d;
  d.rank = r;
  d.world_size = 4;
  d.path = "/traces/rank" + std::to_string(r) + ".pt.trace.json.gz";
  d.device = "NVIDIA H200";
  d.input_bytes = 123456789012;
  d.steps.push_back({7, 25'000'123, 3'000'001, 1, 2, 21'000'000, 3, 4, 5, 6, 7});
  d.steps.push_back({8, 24'000'000, 2'999'999, 0, 0, 20'000'000, 0, 0, 1'000'001, 0, 0});
  d.groups.push_back({"0", "default_pg", 4, r});
  d.groups.push_back({"[0, 2]", "", 2, -1});
  d.collectives = {{0, 0, 0, 76'128}, {0, 1, 1, 122'784}, {1, 0, 1, 9}};
  d.classes.push_back({"gemm_bf16", 102, 1'491'109});
  setJob(d, {{"precision", "bf16"}, {"optimizer", "AdamW \"fused\""}});
  return d;
}

fs::path tmp(const std::string& name) {
  auto d = fs::temp_directory_path() / ("gpudoctor_summary_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d / name;
}

void expectSame(const RankDigest& a, const RankDigest& b) {
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.world_size, b.world_size);
  EXPECT_EQ(a.path, b.path);
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.input_bytes, b.input_bytes);
  EXPECT_EQ(a.left_out, b.left_out);
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {
    EXPECT_EQ(a.steps[i].number, b.steps[i].number);
    EXPECT_EQ(a.steps[i].wall, b.steps[i].wall);
    EXPECT_EQ(a.steps[i].compute, b.steps[i].compute);
    EXPECT_EQ(a.steps[i].idle_other, b.steps[i].idle_other);
    EXPECT_EQ(a.steps[i].idle_sync_loader, b.steps[i].idle_sync_loader);
  }
  ASSERT_EQ(a.groups.size(), b.groups.size());
  for (size_t i = 0; i < a.groups.size(); ++i) {
    EXPECT_EQ(a.groups[i].name, b.groups[i].name);
    EXPECT_EQ(a.groups[i].desc, b.groups[i].desc);
    EXPECT_EQ(a.groups[i].size, b.groups[i].size);
    EXPECT_EQ(a.groups[i].position, b.groups[i].position);
  }
  ASSERT_EQ(a.collectives.size(), b.collectives.size());
  for (size_t i = 0; i < a.collectives.size(); ++i) {
    EXPECT_EQ(a.collectives[i].group, b.collectives[i].group);
    EXPECT_EQ(a.collectives[i].seq, b.collectives[i].seq);
    EXPECT_EQ(a.collectives[i].step, b.collectives[i].step);
    EXPECT_EQ(a.collectives[i].dur_ns, b.collectives[i].dur_ns);
  }
  ASSERT_EQ(a.classes.size(), b.classes.size());
  EXPECT_EQ(a.classes[0].name, b.classes[0].name);
  EXPECT_EQ(a.classes[0].total_ns, b.classes[0].total_ns);
  EXPECT_EQ(a.job, b.job);
}

TEST(SummaryFile, RoundTripsPlainAndGzipExactly) {
  std::vector<RankDigest> in = {sample(0), sample(2)};
  in[1].left_out = "no GPU activity";
  for (const char* name : {"run.gdsum", "run.gdsum.gz"}) {
    auto p = tmp(name);
    ASSERT_TRUE(writeSummaryFile(p.string(), in).ok());
    auto out = readSummaryFile(p.string());
    ASSERT_TRUE(out.ok()) << out.error().message;
    ASSERT_EQ(out.value().size(), 2u);
    expectSame(in[0], out.value()[0]);
    expectSame(in[1], out.value()[1]);
  }
  auto head = readWholeFile(tmp("run.gdsum").string());
  ASSERT_TRUE(head.ok());
  EXPECT_TRUE(isSummaryHead(head.value()));
  EXPECT_FALSE(isSummaryHead("{\"schemaVersion\": 1, \"traceEvents\": []}"));
}

std::string errorOf(const std::string& text, const std::string& name = "bad.gdsum") {
  auto p = tmp(name);
  EXPECT_TRUE(writeFileAtomic(p.string(), text).ok());
  auto r = readSummaryFile(p.string());
  return r.ok() ? "" : r.error().message;
}

TEST(SummaryFile, ACutFileIsAnErrorNamingIt) {
  std::string doc = summaryDocument({sample(0), sample(1)});
  std::string cut = doc.substr(0, doc.rfind("{\"end\""));
  EXPECT_NE(errorOf(cut).find("cut short: 2 of 2 ranks and no end line"), std::string::npos) << errorOf(cut);
  // Cut inside a rank's line: that line is not JSON.
  std::string mid = doc.substr(0, doc.size() / 2);
  EXPECT_NE(errorOf(mid).find("bad.gdsum: line 2"), std::string::npos) << errorOf(mid);
  // A gzip file cut short: the stream says so.
  std::string gz = gzipBytes(doc);
  EXPECT_NE(errorOf(gz.substr(0, gz.size() - 20), "bad.gdsum.gz"), "");
}

TEST(SummaryFile, ForeignFilesAndOtherVersionsAreRefused) {
  EXPECT_NE(errorOf("{\"traceEvents\": []}\n").find("not a gpudoctor summary"), std::string::npos);
  EXPECT_NE(errorOf("").find("empty file"), std::string::npos);
  std::string v2 = summaryDocument({sample(0)});
  v2.replace(v2.find("\"version\":1"), 11, "\"version\":2");
  EXPECT_NE(errorOf(v2).find("summary format version 2; this gpudoctor reads version 1"), std::string::npos)
      << errorOf(v2);
}

TEST(SummaryFile, MalformedRanksNameTheLineAndTheField) {
  std::string doc = summaryDocument({sample(0)});
  auto with = [&](const std::string& from, const std::string& to) {
    std::string d = doc;
    d.replace(d.find(from), from.size(), to);
    return errorOf(d);
  };
  EXPECT_NE(with("\"rank\":0", "\"rank\":-3").find("line 2: \"rank\" is not a rank number"), std::string::npos);
  EXPECT_NE(with("[7,25000123", "[7,-25000123").find("negative figure"), std::string::npos);
  EXPECT_NE(with("[0,1,1,122784]", "[5,1,1,122784]").find("names a group or step"), std::string::npos);
  EXPECT_NE(with("[0,1,1,122784]", "[0,0,1,122784]").find("not in (group, sequence) order"), std::string::npos);
  EXPECT_NE(with("\"steps\":", "\"stepz\":").find("\"steps\" is missing"), std::string::npos);
  std::string extra = doc + summaryLine(sample(1)) + "\n";
  EXPECT_NE(errorOf(extra).find("data after the end line"), std::string::npos);
  std::string miscount = doc;
  miscount.replace(miscount.find("\"ranks\":1"), 9, "\"ranks\":2");
  EXPECT_NE(errorOf(miscount).find("does not match the 2 ranks declared"), std::string::npos) << errorOf(miscount);
}

}  // namespace summary_file_test
}  // namespace gpudoctor
