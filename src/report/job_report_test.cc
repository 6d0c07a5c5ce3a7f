// The job profile in every report: the "job" object of analyze --json (unknown -> null), the Job
// block of the terminal report (within 100 columns) and the Job section of the HTML report.
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "analysis/run_test_util.h"
#include "report/html_report.h"
#include "report/json_report.h"
#include "report/terminal.h"

namespace gpudoctor {
namespace {

using nlohmann::json;

std::unique_ptr<testing::Loaded> loadWhatif(const std::string& name) {
  return testing::loadRun({testing::srcPath("testdata/whatif/" + name + ".pt.trace.json.gz")});
}

void expectFits(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) EXPECT_LE(line.size(), 100u) << line;
}

TEST(JobReport, JsonHasTheProfileWithNullForUnknown) {
  auto l = loadWhatif("grad_accum_fp16__base");
  json j = json::parse(renderJson(l->run, 0.0));
  ASSERT_TRUE(j.contains("job"));
  const json& job = j["job"];
  EXPECT_EQ(job["framework"], "pytorch");
  EXPECT_TRUE(job["framework_version"].is_null());
  EXPECT_EQ(job["precision"], "fp16");
  EXPECT_EQ(job["autocast"], true);
  EXPECT_EQ(job["grad_scaler"], true);
  EXPECT_EQ(job["grad_accumulation_steps"], 4);
  EXPECT_EQ(job["parallelism"]["data"], "none");
  EXPECT_EQ(job["parallelism"]["ranks"], 1);
  EXPECT_EQ(job["optimizer"]["name"], "AdamW");
  EXPECT_EQ(job["optimizer"]["impl"], "foreach");
  EXPECT_EQ(job["dataloader"]["present"], false);
  EXPECT_TRUE(job["dataloader"]["workers"].is_null());
  EXPECT_EQ(job["activation_checkpointing"], false);
  ASSERT_TRUE(job["host_syncs"].is_array());
  const json& first = job["host_syncs"][0];
  EXPECT_EQ(first["op"], "aten::item");
  EXPECT_EQ(first["caller"], "GradScaler");
  EXPECT_EQ(first["count_per_step"], 1.0);
  bool defined = false;
  for (const auto& d : j["definitions"]) defined |= d.get<std::string>().rfind("job: ", 0) == 0;
  EXPECT_TRUE(defined);

  // Inside CUDA graphs the optimizer and the backward passes are not visible: null, not a guess.
  auto g = loadWhatif("gpt_launch_bound__cuda_graphs");
  json gj = json::parse(renderJson(g->run, 0.0))["job"];
  EXPECT_TRUE(gj["optimizer"]["name"].is_null());
  EXPECT_TRUE(gj["optimizer"]["impl"].is_null());
  EXPECT_TRUE(gj["grad_accumulation_steps"].is_null());
  EXPECT_TRUE(gj["activation_checkpointing"].is_null());
  EXPECT_EQ(gj["cuda_graphs"], true);
}

TEST(JobReport, TerminalJobBlock) {
  auto l = loadWhatif("grad_accum_fp16__base");
  TerminalParts parts = renderTerminalParts(l->run, {});
  // The job comes first, in the header, before the findings and the tables.
  EXPECT_NE(parts.header.find("Job: PyTorch, fp16 autocast + GradScaler, grad accumulation x4, 1 GPU, AdamW foreach,"),
            std::string::npos)
      << parts.header;
  EXPECT_NE(parts.header.find("host syncs: aten::item in GradScaler 1/step ("), std::string::npos) << parts.header;
  expectFits(parts.header);

  auto h = loadWhatif("healthy__base");
  std::string text = renderTerminal(h->run, {});
  EXPECT_NE(text.find("Job: PyTorch, bf16 autocast, 1 GPU, AdamW fused, DataLoader with workers (pinned), no compile,"),
            std::string::npos)
      << text;
  expectFits(text);

  auto ddp = testing::loadRun({testing::srcPath("examples/ddp_bf16_flash")});
  std::string dt = renderTerminalParts(ddp->run, {}).header;
  EXPECT_NE(dt.find("DDP x2"), std::string::npos) << dt;
  EXPECT_NE(dt.find("  ranks differ: host sync cudaEventSynchronize in DistributedDataParallel.forward"),
            std::string::npos)
      << dt;
  expectFits(dt);
}

TEST(JobReport, HtmlJobSectionEscapes) {
  auto l = loadWhatif("activation_checkpointing__base");
  RunAnalysis run = l->run;
  run.job.host_syncs.push_back({"aten::item", "cudaStreamSynchronize", "<lambda>", "DtoH", 1, 2e6, 1e6});
  run.job.notes.push_back("a & b");
  std::string html = renderHtml(run, Diagnosis{});
  EXPECT_NE(html.find("<h2>Job (from the trace)</h2><table id=job>"), std::string::npos);
  size_t ac = html.find("<tr><th>activation checkpointing</th><td>yes, ");
  ASSERT_NE(ac, std::string::npos) << html.substr(0, 4000);
  EXPECT_NE(html.find("% of forward GPU time recomputed</td></tr>", ac), std::string::npos);
  EXPECT_NE(html.find("<td>&lt;lambda&gt;</td>"), std::string::npos);
  EXPECT_EQ(html.find("<lambda>"), std::string::npos);
  EXPECT_NE(html.find("<li>a &amp; b</li>"), std::string::npos);
}

}  // namespace
}  // namespace gpudoctor
