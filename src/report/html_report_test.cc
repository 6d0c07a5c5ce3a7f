// The HTML page as the TensorBoard plugin's successor (issue 42): the per-step breakdown with the
// terminal's parts and ProfilerStep numbers (equal to analyze --json's), the operator view, the
// memory view or its note, the host side, legends, the host-sync heading, no "size ?" bars, and a
// compare page without '#' placeholders in kernel names.
#include <regex>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "analysis/compare.h"
#include "analysis/operators.h"
#include "analysis/run_test_util.h"
#include "report/compare_report.h"
#include "report/html_report.h"
#include "report/json_report.h"

namespace gpudoctor {
namespace html_report_test {
using nlohmann::json;

std::unique_ptr<testing::Loaded> load(const std::string& rel) { return testing::loadRun({testing::srcPath(rel)}); }

// The part of `html` from the element with id `id` to the end of the enclosing tag `end`.
std::string element(const std::string& html, const std::string& id, const std::string& end) {
  size_t b = html.find("id='" + id + "'");
  if (b == std::string::npos) b = html.find("id=" + id);
  if (b == std::string::npos) return {};
  size_t e = html.find(end, b);
  return html.substr(b, e == std::string::npos ? std::string::npos : e - b);
}

TEST(HtmlReport, HasTheTensorBoardSections) {
  auto l = load("examples/ddp_bf16_flash");
  const std::string html = renderHtml(l->run, Diagnosis{});
  for (const char* id :
       {"id='chart-steps-0'", "id='chart-steps-1'", "id=steps-pick", "id=steps-table-0", "id=host-side", "id=copies",
        "id=host-syncs-heading", "id='chart-operators'", "id=operators", "id=memory-none", "id='chart-trend'"})
    EXPECT_NE(html.find(id), std::string::npos) << id;
  // The host-sync table has a heading right before it.
  size_t table = html.find("<table id=host-syncs>");
  ASSERT_NE(table, std::string::npos);
  size_t heading = html.rfind("<h3 id=host-syncs-heading>", table);
  ASSERT_NE(heading, std::string::npos);
  EXPECT_LT(table - heading, 200u);
  // Legends: the step parts beside each step chart, the ranks' lines beside the trend.
  EXPECT_NE(html.find("</svg><div class=legend><span><i style='background:#2b8a3e'></i>compute</span>"),
            std::string::npos);
  std::string trend = element(html, "chart-trend", "</div>");
  EXPECT_NE(trend.find("<div class=legend>"), std::string::npos);
  EXPECT_NE(trend.find("rank 0</span>"), std::string::npos);
  EXPECT_NE(trend.find("rank 1</span>"), std::string::npos);
  // Self-contained: nothing is fetched.
  for (const char* ext : {"http://", "https://", "<link", "src="}) EXPECT_EQ(html.find(ext), std::string::npos) << ext;
}

// Every bar of a rank's step chart carries the figures of analyze --json's step, in the same order.
void expectStepsEqualJson(const std::string& rel) {
  SCOPED_TRACE(rel);
  auto l = load(rel);
  const std::string html = renderHtml(l->run, Diagnosis{});
  const json j = json::parse(renderJson(l->run, 0.0));
  const std::regex bar(
      "<g class=step data-step=(-?\\d+) data-wall-ns=(\\d+) data-compute-ns=(\\d+) data-comm-exposed-ns=(\\d+) "
      "data-copy-exposed-ns=(\\d+) data-idle-host-ns=(\\d+) data-idle-sync-ns=(\\d+) "
      "data-idle-dependency-ns=(\\d+) data-idle-other-ns=(\\d+)>");
  size_t checked = 0;
  for (const auto& rank : j["ranks"]) {
    std::string chart = element(html, "chart-steps-" + std::to_string(rank["rank"].get<int>()), "</svg>");
    ASSERT_FALSE(chart.empty()) << "rank " << rank["rank"];
    std::vector<std::smatch> bars;
    for (std::sregex_iterator it(chart.begin(), chart.end(), bar), end; it != end; ++it) bars.push_back(*it);
    ASSERT_EQ(bars.size(), rank["steps"].size());
    for (size_t k = 0; k < bars.size(); ++k) {
      const json& s = rank["steps"][k];
      const auto& m = bars[k];
      EXPECT_EQ(std::stoll(m[1]), s["step"].get<int64_t>());
      EXPECT_EQ(std::stoll(m[2]), s["wall_ns"].get<int64_t>());
      EXPECT_EQ(std::stoll(m[3]), s["compute_ns"].get<int64_t>());
      EXPECT_EQ(std::stoll(m[4]), s["comm_exposed_ns"].get<int64_t>());
      EXPECT_EQ(std::stoll(m[5]), s["copy_exposed_ns"].get<int64_t>());
      EXPECT_EQ(std::stoll(m[6]), s["idle_cause_ns"]["host"].get<int64_t>());
      EXPECT_EQ(std::stoll(m[7]), s["idle_cause_ns"]["sync"].get<int64_t>());
      EXPECT_EQ(std::stoll(m[8]), s["idle_cause_ns"]["dependency"].get<int64_t>());
      EXPECT_EQ(std::stoll(m[9]), s["idle_cause_ns"]["other"].get<int64_t>());
      // The parts add up to the wall time, as the terminal's table says.
      int64_t sum = 0;
      for (int p = 3; p <= 9; ++p) sum += std::stoll(m[p]);
      EXPECT_EQ(sum, std::stoll(m[2]));
      // The step is named as the terminal names it.
      EXPECT_NE(chart.find(fmt::format(">#{}<", s["step"].get<int64_t>())), std::string::npos);
      ++checked;
    }
  }
  EXPECT_GT(checked, 0u);
}

TEST(HtmlReport, PerStepNumbersEqualTheJson) {
  expectStepsEqualJson("examples/ddp_bf16_flash");
  expectStepsEqualJson("testdata/kineto/launch_bound_rank0.pt.trace.json.gz");
  expectStepsEqualJson("testdata/whatif/activation_checkpointing__base.pt.trace.json.gz");
}

TEST(HtmlReport, StepTrendIsNumberedByProfilerStep) {
  auto l = load("testdata/whatif/activation_checkpointing__base.pt.trace.json.gz");
  const std::string trend = element(renderHtml(l->run, Diagnosis{}), "chart-trend", "</svg>");
  ASSERT_FALSE(trend.empty());
  std::set<std::string> labels;
  const std::regex tick("text-anchor=middle>([^<]*)</text>");
  for (std::sregex_iterator it(trend.begin(), trend.end(), tick), end; it != end; ++it) labels.insert((*it)[1]);
  for (const auto& w : l->run.ranks[0].windows) EXPECT_TRUE(labels.count(fmt::format("#{}", w.number))) << w.number;
  EXPECT_FALSE(labels.count("1"));  // not 1..N
}

TEST(HtmlReport, CollectivesWithoutSizeAreANoteNotABar) {
  auto l = load("examples/ddp_bf16_flash");
  const std::string html = renderHtml(l->run, Diagnosis{});
  EXPECT_EQ(html.find("size ?"), std::string::npos);
  std::string chart = element(html, "chart-collectives", "</svg>");
  ASSERT_FALSE(chart.empty());
  EXPECT_EQ(chart.find(" ?"), std::string::npos);
  EXPECT_NE(html.find("<p id=collectives-unsized>"), std::string::npos);
  EXPECT_NE(chart.find("MiB x4"), std::string::npos);
}

TEST(HtmlReport, MemoryViewWhereTheTraceHasMemoryEvents) {
  auto l = load("testdata/whatif/activation_checkpointing__base.pt.trace.json.gz");
  ASSERT_FALSE(l->traces[0].gpu_memory.empty());
  const std::string html = renderHtml(l->run, Diagnosis{});
  const std::string chart = element(html, "chart-memory", "</svg>");
  ASSERT_FALSE(chart.empty());
  EXPECT_NE(chart.find("<polyline points='"), std::string::npos);
  EXPECT_NE(chart.find(">#2</text>"), std::string::npos);
  EXPECT_NE(html.find("<table id=memory>"), std::string::npos);
  EXPECT_EQ(html.find("id=memory-none"), std::string::npos);
  // The peak in the table is the trace's (the reader's own peak) when the steps hold it.
  EXPECT_NE(html.find(fmt::format("{:.2f} GiB", l->traces[0].peak_allocated_bytes / (1024.0 * 1024 * 1024))),
            std::string::npos);
}

TEST(HtmlReport, OperatorTableIsCapped) {
  auto l = load("testdata/whatif/activation_checkpointing__base.pt.trace.json.gz");
  const std::string table = element(renderHtml(l->run, Diagnosis{}), "operators", "</table>");
  ASSERT_FALSE(table.empty());
  size_t rows = 0;
  for (size_t p = table.find("<tr><td"); p != std::string::npos; p = table.find("<tr><td", p + 1)) ++rows;
  EXPECT_EQ(rows, 30u);
  EXPECT_NE(table.find("aten::"), std::string::npos);
}

TEST(Operators, GpuTimeAddsUpAndSelfWithinTotal) {
  auto l = load("testdata/kineto/fp32_naive_rank0.pt.trace.json.gz");
  std::vector<RankWindows> ranks;
  for (const auto& r : l->run.ranks) ranks.push_back({&r.index, &r.windows});
  const OperatorSummary s = summarizeOperators(ranks, 100000);
  ASSERT_FALSE(s.ops.empty());
  EXPECT_EQ(s.ops.size(), s.distinct);
  int64_t gpu_self = 0;
  for (const auto& o : s.ops) {
    gpu_self += o.gpu_self_ns;
    EXPECT_LE(o.host_self_ns, o.host_total_ns) << o.name;
    EXPECT_LE(o.gpu_self_ns, o.gpu_total_ns) << o.name;
  }
  EXPECT_EQ(gpu_self + s.gpu_unattributed_ns, s.gpu_ns);
  // Kineto links nearly every kernel to the operator that launched it.
  EXPECT_LT(static_cast<double>(s.gpu_unattributed_ns), 0.2 * static_cast<double>(s.gpu_ns));
  // The GEMMs of an FP32 model are the operator view's top GPU cost.
  const std::string top = summarizeOperators(ranks, 1).ops.at(0).name;
  EXPECT_TRUE(top == "aten::mm" || top == "aten::addmm" || top == "aten::bmm") << top;
}

TEST(CompareHtml, KernelNamesHaveNoPlaceholders) {
  auto b = load("testdata/whatif/gpt_fp32_naive__base.pt.trace.json.gz");
  auto n = load("testdata/whatif/gpt_fp32_naive__bf16+sdpa.pt.trace.json.gz");
  auto r = compareRuns(summarizeRun(b->run, -1), summarizeRun(n->run, -1));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_FALSE(r.value().kernels.empty());
  const std::string html = renderCompareHtml(r.value(), {"base", "new"});
  std::string table = element(html, "kernels", "</table>");
  ASSERT_FALSE(table.empty());
  table = std::regex_replace(table, std::regex("&#?[0-9a-zA-Z]+;"), "");  // entities are not names
  EXPECT_EQ(table.find('#'), std::string::npos) << table;
  EXPECT_NE(table.find("<td>"), std::string::npos);
}

}  // namespace html_report_test
}  // namespace gpudoctor
