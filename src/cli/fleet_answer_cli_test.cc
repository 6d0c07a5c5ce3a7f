// The streaming mode's answer as a user runs it: after the pass over every rank, the slowest, the
// median and the straggler rank read in full give findings and a plan in the terminal, --json and
// --html; from summaries alone, which traces they need. The committed two-rank example is forced
// into the streaming mode with --stream; a 16-rank job is made from it by bench/fleet_traces.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli_test_util.h"

namespace gpudoctor::testing {
namespace fleet_answer_cli_test {
using nlohmann::json;

const std::string kRank0 = "examples/ddp_bf16_flash/bf16_flash_rank0.pt.trace.json.gz";
const std::string kRank1 = "examples/ddp_bf16_flash/bf16_flash_rank1.pt.trace.json.gz";

size_t at(const std::string& text, const std::string& what) { return text.find(what); }

TEST(CliFleetAnswer, StreamingPrintsFindingsAndAPlanOfTheRanksAnalyzedInFull) {
  auto r = run("analyze -q --stream " + src("examples/ddp_bf16_flash"));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::string& o = r.out;
  EXPECT_NE(at(o, "Analyzed in full"), std::string::npos) << o;
  EXPECT_NE(at(o, "  rank 1: slowest step: 28.122 ms per step\n"), std::string::npos) << o;
  EXPECT_NE(at(o, "  rank 0: median step: 24.850 ms per step; straggler: holds back process group 0"),
            std::string::npos)
      << o;
  // The findings and the plan as the per-rank report prints them, before the cross-rank section.
  const size_t findings = at(o, "Findings by severity"), plan = at(o, "\nPlan (predicted by replay"),
               across = at(o, "\nAcross ranks");
  ASSERT_NE(findings, std::string::npos) << o;
  ASSERT_NE(plan, std::string::npos) << o;
  ASSERT_NE(across, std::string::npos) << o;
  EXPECT_LT(at(o, "Analyzed in full"), findings);
  EXPECT_LT(findings, plan);
  EXPECT_LT(plan, across);
  EXPECT_NE(at(o, "[critical] Launch-bound"), std::string::npos) << o;
  EXPECT_NE(at(o, "1. cuda_graphs (launch.overhead)"), std::string::npos) << o;
  // Without -q a note names the ranks read in full.
  auto loud = run("analyze --stream " + src("examples/ddp_bf16_flash"));
  ASSERT_EQ(loud.rc, 0) << loud.err;
  EXPECT_NE(at(loud.err, "reading ranks 1 (slowest), 0 (median, straggler) in full"), std::string::npos) << loud.err;
}

TEST(CliFleetAnswer, StreamingJsonCarriesThePerRankPathsDiagnosis) {
  auto s = run("analyze -q --stream --json - " + src("examples/ddp_bf16_flash"));
  auto m = run("analyze -q --json - " + src("examples/ddp_bf16_flash"));
  ASSERT_EQ(s.rc, 0) << s.err;
  ASSERT_EQ(m.rc, 0) << m.err;
  json stream = json::parse(s.out), full = json::parse(m.out);
  EXPECT_EQ(stream["mode"], "fleet");
  const json& ranks = stream["analyzed_in_full"]["ranks"];
  ASSERT_EQ(ranks.size(), 2u) << stream["analyzed_in_full"].dump();
  EXPECT_EQ(ranks[0]["rank"], 1);
  EXPECT_EQ(ranks[0]["reasons"], json({"slowest"}));
  EXPECT_EQ(ranks[1]["rank"], 0);
  EXPECT_EQ(ranks[1]["reasons"], json({"median", "straggler"}));
  EXPECT_EQ(ranks[0]["path"], src(kRank1));
  EXPECT_TRUE(ranks[0]["analyzed"].get<bool>());
  EXPECT_TRUE(ranks[1]["analyzed"].get<bool>());
  EXPECT_EQ(stream["analyzed_in_full"]["note"], "");
  // Both ranks of a two-rank job: one run of every rank, so the same diagnosis as the per-rank path.
  ASSERT_TRUE(stream["diagnosis"].is_object());
  EXPECT_EQ(stream["diagnosis"], full["diagnosis"]);
  EXPECT_FALSE(stream["diagnosis"]["plan"].empty());
  EXPECT_EQ(stream["fleet"], full["fleet"]);
}

TEST(CliFleetAnswer, StreamingHtmlHasTheFindingsAndTheAcrossRanksSection) {
  auto d = scratch();
  const auto page = d / "stream.html";
  auto r = run("analyze -q --stream --html " + page.string() + " " + src("examples/ddp_bf16_flash"));
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::string html = slurp(page);
  for (const char* id : {"<ul id=analyzed-in-full>", "<div id=findings>", "<table id=plan>",
                         "<h2 id=across-ranks>Across ranks</h2>", "<table id=fleet-groups>", "<table id=checklist>"})
    EXPECT_NE(at(html, id), std::string::npos) << id;
  EXPECT_NE(at(html, "ranks 0, 1 analyzed in full"), std::string::npos);
  EXPECT_NE(at(html, "rank 0 holds the group back"), std::string::npos);
  EXPECT_LT(at(html, "<table id=plan>"), at(html, "id=across-ranks"));
  // '-': the page alone on stdout.
  auto alone = run("analyze -q --stream --html - " + src("examples/ddp_bf16_flash"));
  ASSERT_EQ(alone.rc, 0) << alone.err;
  EXPECT_EQ(alone.out.rfind("<!doctype html>", 0), 0u);
  EXPECT_EQ(at(alone.out, "gpudoctor analyze:"), std::string::npos);
}

TEST(CliFleetAnswer, SummariesAloneSayWhichTracesTheFindingsNeed) {
  auto d = scratch();
  const auto sum = d / "answer.gdsum.gz";
  ASSERT_EQ(run("analyze -q --summary-out " + sum.string() + " " + src("examples/ddp_bf16_flash")).rc, 0);
  auto r = run("analyze -q " + sum.string());
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(at(r.out, "Findings need the traces"), std::string::npos) << r.out;
  EXPECT_NE(at(r.out, "rank 1 (" + src(kRank1) + "): slowest step"), std::string::npos) << r.out;
  EXPECT_NE(at(r.out, "gpudoctor analyze " + src(kRank1) + " " + src(kRank0)), std::string::npos) << r.out;
  EXPECT_EQ(at(r.out, "Findings by severity"), std::string::npos) << r.out;
  EXPECT_NE(at(r.out, "Across ranks"), std::string::npos) << r.out;
  auto j = run("analyze -q --json - " + sum.string());
  ASSERT_EQ(j.rc, 0) << j.err;
  json doc = json::parse(j.out);
  EXPECT_TRUE(doc["diagnosis"].is_null());
  EXPECT_NE(doc["analyzed_in_full"]["note"].get<std::string>().find("need the traces"), std::string::npos);
  for (const auto& x : doc["analyzed_in_full"]["ranks"]) EXPECT_FALSE(x["analyzed"].get<bool>());
  const auto page = d / "summaries.html";
  auto h = run("analyze -q --html " + page.string() + " " + sum.string());
  ASSERT_EQ(h.rc, 0) << h.err;
  const std::string html = slurp(page);
  EXPECT_NE(at(html, "Findings need the traces"), std::string::npos);
  EXPECT_NE(at(html, "<h2 id=across-ranks>"), std::string::npos);
}

TEST(CliFleetAnswer, ARankGivenOnlyAsASummaryIsNamedBesideTheRanksAnalyzed) {
  auto d = scratch();
  const auto sum0 = d / "rank0.gdsum";
  ASSERT_EQ(run("analyze -q --stream --allow-missing-ranks --summary-out " + sum0.string() + " " + src(kRank0)).rc, 0);
  auto r = run("analyze -q " + sum0.string() + " " + src(kRank1));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(at(r.out, "  rank 1: slowest step"), std::string::npos) << r.out;
  EXPECT_NE(at(r.out, "rank 0: median step"), std::string::npos) << r.out;
  EXPECT_NE(at(r.out, "not analyzed: only its summary was given"), std::string::npos) << r.out;
  EXPECT_NE(at(r.out, "Findings by severity"), std::string::npos) << r.out;
}

#ifdef GPUDOCTOR_FLEET_TRACES
// A 16-rank job (two data-parallel groups of 8; rank 5 computes 3 ms more every step, rank 11 pauses
// 20 ms in step 3), made from the bundled trace.
std::string sixteenRanks() {
  static const std::string dir = [] {
    auto d = scratch() / "sixteen";
    std::string cmd = std::string(GPUDOCTOR_FLEET_TRACES) + " " + src(kRank0) + " " + d.string() +
                      " --ranks 16 --stages 2 --repeat 2 --slow-rank 5 --gc 11:3 >/dev/null 2>&1";
    return std::system(cmd.c_str()) == 0 ? (d / "traces").string() : std::string();
  }();
  return dir;
}

TEST(CliFleetAnswer, ManyRanksAreDiagnosedFromTheSlowestTheMedianAndTheStraggler) {
  const std::string job = sixteenRanks();
  ASSERT_FALSE(job.empty());
  auto r = run("analyze -q --stream --json - " + job);
  ASSERT_EQ(r.rc, 0) << r.err;
  json doc = json::parse(r.out);
  std::vector<int> ranks;
  for (const auto& x : doc["analyzed_in_full"]["ranks"]) ranks.push_back(x["rank"]);
  EXPECT_EQ(ranks, (std::vector<int>{11, 7, 5}));
  EXPECT_EQ(doc["analyzed_in_full"]["ranks"][2]["reasons"], json({"straggler"}));
  // The straggler finding is the whole job's verdict (the cross-rank analyses'), not three ranks'.
  bool straggler = false;
  for (const auto& f : doc["diagnosis"]["findings"])
    straggler |= f["id"] == "communication.straggler" && f["title"].get<std::string>().rfind("Rank 5 ", 0) == 0;
  EXPECT_TRUE(straggler) << doc["diagnosis"]["findings"].dump();
  EXPECT_FALSE(doc["diagnosis"]["plan"].empty());
  const auto page = scratch() / "sixteen_stream.html";
  auto t = run("analyze -q --stream --html " + page.string() + " " + job);
  ASSERT_EQ(t.rc, 0) << t.err;
  EXPECT_NE(at(t.out, "  rank 5: straggler: holds back process group 1"), std::string::npos) << t.out;
  // The page's notes are those of the ranks read: the 13 others are chosen away, not missing.
  const std::string html = slurp(page);
  EXPECT_NE(at(html, "ranks 5, 7, 11 analyzed in full"), std::string::npos);
  EXPECT_EQ(at(html, "have no trace here"), std::string::npos);
}

// Above 64 ranks analyze streams on its own (no --stream): a 70-rank job (two groups of 35, rank 40
// computes 3 ms more every step) still gets findings, a plan and a page with the cross-rank section.
TEST(CliFleetAnswer, SeventyRanksGetFindingsAPlanAndAPageWithoutAsking) {
  const auto d = scratch() / "seventy";
  const std::string cmd = std::string(GPUDOCTOR_FLEET_TRACES) + " " + src(kRank0) + " " + d.string() +
                          " --ranks 70 --stages 2 --repeat 1 --slow-rank 40 >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const std::string job = (d / "traces").string(), page = (d / "job.html").string(),
                    doc_path = (d / "job.json").string();
  auto r = run("analyze -q --json " + doc_path + " --html " + page + " " + job);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(at(r.out, "Findings by severity"), std::string::npos) << r.out;
  EXPECT_NE(at(r.out, "\nPlan (predicted by replay"), std::string::npos) << r.out;
  EXPECT_NE(at(r.out, "\nAcross ranks"), std::string::npos) << r.out;
  json doc = json::parse(slurp(doc_path));
  EXPECT_EQ(doc["mode"], "fleet");
  EXPECT_FALSE(doc["diagnosis"]["findings"].empty());
  EXPECT_FALSE(doc["diagnosis"]["plan"].empty());
  bool straggler = false;
  for (const auto& f : doc["diagnosis"]["findings"])
    straggler |= f["id"] == "communication.straggler" && f["title"].get<std::string>().rfind("Rank 40 ", 0) == 0;
  EXPECT_TRUE(straggler) << doc["diagnosis"]["findings"].dump();
  const std::string html = slurp(page);
  EXPECT_NE(at(html, "<h2 id=across-ranks>Across ranks</h2>"), std::string::npos);
  EXPECT_NE(at(html, "Findings"), std::string::npos);
  EXPECT_NE(at(html, "analyzed in full"), std::string::npos);
}

TEST(CliFleetAnswer, TheInMemoryPageHasTheAcrossRanksSectionTheTerminalShows) {
  const std::string job = sixteenRanks();
  ASSERT_FALSE(job.empty());
  const auto page = scratch() / "sixteen.html";
  auto r = run("analyze -q --no-what-if --html " + page.string() + " " + job);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(at(r.out, "\nAcross ranks"), std::string::npos);
  const std::string html = slurp(page);
  EXPECT_NE(at(html, "<h2 id=across-ranks>Across ranks</h2>"), std::string::npos);
  EXPECT_NE(at(html, "slow rank 5: +3.000 ms of own time per step"), std::string::npos);
  EXPECT_NE(at(html, "rank 11, step 3: +20.000 ms"), std::string::npos);
  EXPECT_EQ(at(html, "analyzed-in-full"), std::string::npos);  // not the streaming mode
  // Two ranks: no cross-rank section, on the page as in the terminal.
  const auto two = scratch() / "two.html";
  ASSERT_EQ(run("analyze -q --no-what-if --html " + two.string() + " " + src("examples/ddp_bf16_flash")).rc, 0);
  EXPECT_EQ(at(slurp(two), "id=across-ranks"), std::string::npos);
}
#endif

}  // namespace fleet_answer_cli_test
}  // namespace gpudoctor::testing
