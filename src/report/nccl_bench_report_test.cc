// nccl bench's table and JSON and nccl tune's report on hand-made rows and decisions.
#include "report/nccl_bench_report.h"

#include <gtest/gtest.h>

#include "report/schema_test_util.h"

#include <nlohmann/json.hpp>

namespace gpudoctor {
namespace {

NcclBenchRow row(const std::string& coll, int64_t bytes, double us, double bus, int64_t wrong, double in_us) {
  NcclBenchRow r;
  r.collective = coll, r.dtype = "float", r.redop = coll == "allgather" ? "none" : "sum";
  r.bytes = bytes, r.count = bytes / 4, r.root = -1;
  r.time_us[0] = us, r.algbw[0] = bytes / us / 1e3, r.busbw[0] = bus, r.wrong[0] = wrong;
  r.time_us[1] = in_us, r.algbw[1] = in_us > 0 ? bytes / in_us / 1e3 : 0, r.busbw[1] = in_us > 0 ? bus : 0;
  return r;
}

TEST(NcclBenchReport, TableInNcclTestsColumns) {
  std::vector<NcclBenchRow> rows = {row("allreduce", 1024, 10, 1.0, 0, 12), row("allreduce", 4096, 20, 3.0, 0, 0),
                                    row("allgather", 1024, 8, 2.0, 5, 9)};
  std::string t = renderNcclBenchTable(rows, 2, true);
  EXPECT_EQ(t.rfind("# gpudoctor nccl bench: 2 ranks\n", 0), 0u) << t;
  EXPECT_NE(t.find("out-of-place"), std::string::npos);
  EXPECT_NE(t.find("in-place"), std::string::npos);
  EXPECT_NE(t.find("\n# allreduce\n"), std::string::npos) << t;
  EXPECT_NE(t.find("\n# allgather\n"), std::string::npos) << t;
  EXPECT_NE(t.find("          1024          256    float    sum     -1     10.00    0.10    1.00      0     12.00"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("      0       n/a"), std::string::npos) << t;  // 4096 B not measured in place
  EXPECT_NE(t.find("# Out of bounds values : 5 FAILED\n# Avg bus bandwidth    : 2.000\n"), std::string::npos) << t;
  std::string oop = renderNcclBenchTable(rows, 2, false);
  EXPECT_EQ(oop.find("in-place"), std::string::npos) << oop;
  EXPECT_NE(renderNcclBenchTable({}, 1, true).find("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0.000\n"),
            std::string::npos);
}

TEST(NcclBenchReport, JsonHasEveryRow) {
  EXPECT_EQ(testing::schemaProblems("nccl_bench", renderNcclBenchJson({row("allreduce", 1024, 10, 1.0, 0, 12)}, 2)),
            "");
  // The validator catches a changed document: a required field gone, a byte count as a float.
  if (testing::schemaValidatorAvailable()) {
    auto doc = nlohmann::json::parse(renderNcclBenchJson({row("allreduce", 1024, 10, 1.0, 0, 12)}, 2));
    auto gone = doc;
    gone.erase("tool");
    EXPECT_NE(testing::schemaProblems("nccl_bench", gone.dump()).find("'tool' is a required property"),
              std::string::npos);
    auto floaty = doc;
    floaty["results"][0]["bytes"] = 1024.5;
    EXPECT_NE(testing::schemaProblems("nccl_bench", floaty.dump()).find("is not of type 'integer'"), std::string::npos);
  }
  auto j = nlohmann::json::parse(renderNcclBenchJson({row("allreduce", 1024, 10, 1.0, 0, 12)}, 2));
  EXPECT_EQ(j["tool"], "gpudoctor nccl bench");
  EXPECT_EQ(j["ranks"], 2);
  ASSERT_EQ(j["results"].size(), 1u);
  EXPECT_EQ(j["results"][0]["bytes"], 1024);
  EXPECT_DOUBLE_EQ(j["results"][0]["out_of_place"]["time_us"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(j["results"][0]["in_place"]["time_us"].get<double>(), 12.0);
}

TEST(NcclBenchReport, TuneTextAndJson) {
  NcclTuneDecision d;
  NcclTuneChoice c;
  c.key = {"allreduce", 2 << 20};
  c.default_median_us = 28, c.default_min_us = 27.7, c.default_max_us = 28;
  c.best = {"ring", "ll", "default"};
  c.best_median_us = 22.1, c.best_min_us = 22, c.best_max_us = 22.2;
  c.kept = true;
  d.choices = {c};
  d.why_no_env = "no setting is faster somewhere and never slower";
  NcclTuneRun run;
  run.nranks = 2, run.settings = 13, run.repeats = 5, run.default_channels = 24, run.tuner_config = "t.csv";
  std::string t = renderNcclTuneText(d, run);
  EXPECT_NE(t.find("# gpudoctor nccl tune: 2 ranks, 13 settings x 5 fresh processes"), std::string::npos) << t;
  EXPECT_NE(t.find("NCCL's own channel count 24"), std::string::npos) << t;
  EXPECT_NE(t.find("ring/ll"), std::string::npos) << t;
  EXPECT_NE(t.find("21.1%  kept\n"), std::string::npos) << t;
  EXPECT_NE(t.find("and the median by > 5 %; the rest keep NCCL's default."), std::string::npos) << t;
  EXPECT_NE(t.find("Not validated (--no-validate)"), std::string::npos) << t;
  EXPECT_NE(t.find("Environment lines: none: no setting is faster somewhere and never slower.\n"), std::string::npos)
      << t;
  EXPECT_NE(t.find("GPUDOCTOR_TUNER_CONFIG=t.csv\n"), std::string::npos) << t;
  EXPECT_EQ(testing::schemaProblems("nccl_tune", renderNcclTuneJson(d, run)), "");
  auto j = nlohmann::json::parse(renderNcclTuneJson(d, run));
  EXPECT_EQ(j["settings"], 13);
  EXPECT_EQ(j["choices"][0]["best"], "ring/ll");
  EXPECT_TRUE(j["choices"][0]["kept"].get<bool>());
  EXPECT_EQ(j["env"].size(), 0u);
  EXPECT_EQ(j["why_no_env"], "no setting is faster somewhere and never slower");
  EXPECT_EQ(j["tuner_config"], "t.csv");
}

}  // namespace
}  // namespace gpudoctor
