// analyze's many-rank paths as a user runs them: summaries written and read back, the streaming
// mode's document, and its bad input (one line, non-zero exit). The generated-job checks are the
// ctest fleet_faults (scripts/fleet/check_fleet.sh).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli_test_util.h"

namespace gpudoctor::testing {
namespace {

using nlohmann::json;

TEST(CliFleet, SummariesGiveTheSameCrossRankReportAsTheTraces) {
  auto d = scratch();
  auto r = run("analyze -q --json " + (d / "full.json").string() + " --summary-out " + (d / "ex.gdsum.gz").string() +
               " " + src("examples/ddp_bf16_flash"));
  ASSERT_EQ(r.rc, 0) << r.err;
  auto s = run("analyze -q --json " + (d / "fleet.json").string() + " " + (d / "ex.gdsum.gz").string());
  ASSERT_EQ(s.rc, 0) << s.err;
  json full = json::parse(slurp(d / "full.json")), fleet = json::parse(slurp(d / "fleet.json"));
  EXPECT_EQ(fleet["mode"], "fleet");
  EXPECT_EQ(full["fleet"], fleet["fleet"]);
  EXPECT_EQ(fleet["fleet"]["ranks"], 2);
  EXPECT_EQ(fleet["fleet"]["groups"][0]["straggler"], 0);  // the bundled example's rank 1 waits for rank 0
  EXPECT_EQ(fleet["timing"]["ranks"], 2);
  EXPECT_NE(s.out.find("gpudoctor analyze: 2 ranks of 2"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("rank 0 holds the group back"), std::string::npos) << s.out;
}

TEST(CliFleet, StreamingRefusesPerRankOptionsAndNamesMissingRanks) {
  auto r = run("analyze --stream --rank 0 " + src("examples/ddp_bf16_flash"));
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--rank needs the per-rank analysis"), std::string::npos) << r.err;
  auto m = run("analyze --stream -q " + src("examples/ddp_bf16_flash/bf16_flash_rank0.pt.trace.json.gz"));
  EXPECT_EQ(m.rc, 3);
  EXPECT_EQ(lines(m.err), 1) << m.err;
  EXPECT_NE(m.err.find("rank 1 of the job's 2 has no trace or summary here"), std::string::npos) << m.err;
  auto ok = run("analyze --stream -q --allow-missing-ranks --json - " +
                src("examples/ddp_bf16_flash/bf16_flash_rank0.pt.trace.json.gz"));
  ASSERT_EQ(ok.rc, 0) << ok.err;
  EXPECT_NE(json::parse(ok.out)["fleet"]["notes"].dump().find("missing: 1"), std::string::npos);
}

TEST(CliFleet, BadSummariesAreOneLine) {
  auto d = scratch();
  {
    std::ofstream f(d / "v9.gdsum");
    f << "{\"format\":\"gpudoctor-summary\",\"version\":9,\"ranks\":0}\n{\"end\":0}\n";
  }
  auto v = run("analyze -q " + (d / "v9.gdsum").string());
  EXPECT_EQ(v.rc, 3);
  EXPECT_EQ(lines(v.err), 1) << v.err;
  EXPECT_NE(v.err.find("summary format version 9"), std::string::npos) << v.err;
  {
    std::ofstream f(d / "cut.gdsum");
    f << "{\"format\":\"gpudoctor-summary\",\"version\":1,\"ranks\":3}\n";
  }
  auto c = run("analyze -q " + (d / "cut.gdsum").string());
  EXPECT_EQ(c.rc, 3);
  EXPECT_NE(c.err.find("cut short: 0 of 3 ranks"), std::string::npos) << c.err;
  // Two summaries of the same ranks.
  ASSERT_EQ(run("analyze -q --summary-out " + (d / "a.gdsum").string() + " " + src("examples/ddp_bf16_flash")).rc, 0);
  auto dup = run("analyze -q " + (d / "a.gdsum").string() + " " + (d / "a.gdsum").string());
  EXPECT_EQ(dup.rc, 3);
  EXPECT_NE(dup.err.find("appears twice"), std::string::npos) << dup.err;
}

}  // namespace
}  // namespace gpudoctor::testing

namespace gpudoctor::testing {
namespace {

// Every JSON document names its tool and carries a schema version (issue 20), whichever verb wrote it.
TEST(CliJson, EveryDocumentHasToolAndSchemaVersion) {
  auto d = scratch();
  const std::string ex = src("examples/ddp_bf16_flash");
  const std::vector<std::string> commands = {
      "analyze -q --json - " + ex,
      "analyze -q --stream --json - " + ex,
      "checklist -q --json - " + ex,
      "compare -q --json - " + ex + " " + ex,
      "nccl env --no-host --json - --from " + src("testdata/nccl_env/slurm.sh"),
      "nccl log --json - " + src("testdata/nccl_logs/ddp_2xh200_info.log"),
      "plan --model gpt2 --gpus-per-node 1 --global-batch 8 --json -",
      "place --gpus 2 --topology " + src("testdata/topology/dgx1_v100.toml") + " --json -",
      "place --nodes 2 --gpus-per-node 8 --topology " + src("testdata/topology/cluster_small.toml") + " --json -",
      "monitor report --json - " + src("docs/monitor_h200/monitor.jsonl.gz"),
  };
  for (const auto& c : commands) {
    auto r = run(c);
    ASSERT_TRUE(r.rc == 0 || r.rc == 1) << c << ": " << r.err;  // (1: a verdict, e.g. nothing fits)
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << c << ": not JSON: " << r.out.substr(0, 200);
    // compare's is 2: its noise changed meaning (issue 42).
    EXPECT_EQ(j.value("schema_version", 0), c.rfind("compare", 0) == 0 ? 2 : 1) << c;
    EXPECT_EQ(j.value("tool", "").rfind("gpudoctor ", 0), 0u) << c;
  }
}

}  // namespace
}  // namespace gpudoctor::testing
