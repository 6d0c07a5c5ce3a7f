// The diagnosis's replay predictions in every report: a finding's predicted step, speedup and next
// bottleneck, the un-profiled step's bottleneck and the plan (fixes applied one after another), in
// JSON, on the terminal and in HTML. The diagnosis is made by hand; the run is one empty rank.
#include <algorithm>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "report/findings_text.h"
#include "report/html_report.h"
#include "report/json_report.h"

namespace gpudoctor {
namespace diagnosis_report_test {

struct OneRank {
  RankTrace trace;
  RunAnalysis run;
  OneRank() {
    trace.rank = 0;
    trace.path = "rank0.pt.trace.json";
    RankAnalysis r;
    r.trace = &trace;
    r.index.trace = &trace;
    r.windows.push_back(StepWindow{.number = 3, .annotated = true, .begin_ns = 0, .end_ns = 20'000'000});
    run.ranks.push_back(std::move(r));
  }
};

Finding finding(const std::string& id, const std::string& title) {
  Finding f;
  f.id = id;
  f.title = title;
  f.severity = Severity::kWarning;
  f.gain_ms_per_step = 5;
  f.gain_share = 0.25;
  f.gain_basis = "bound";
  f.fix = {"do it"};
  return f;
}

// Three findings (predicted with a next bottleneck, predicted without one, not predicted) and a plan
// of two steps, the first with another fix the replay cannot tell from it.
Diagnosis withPlan() {
  Diagnosis d;
  d.primary = "host_launch";
  d.step_ms = 21;
  Finding a = finding("launch.overhead", "Kernel launches leave the GPU idle");
  a.what_if = {.available = true,
               .step_ns = 14'000'000,
               .speedup = 1.43,
               .next_bottleneck = "compute",
               .basis = "cuda_graphs: launches replaced by one graph launch",
               .alternatives = {}};
  Finding b = finding("precision.fp32_gemm", "GEMMs run in fp32");
  b.what_if = {.available = true,
               .step_ns = 15'500'000,
               .speedup = 1.29,
               .next_bottleneck = "",
               .basis = "bf16: GEMM kernels at the bf16 rate",
               .alternatives = {}};
  Finding c = finding("io.pageable_copies", "Copies from pageable memory");
  d.findings = {a, b, c};
  d.what_if = {.available = true,
               .traced_step_ns = 21'000'000,
               .replayed_step_ns = 21'000'000,
               .unprofiled_step_ns = 20'000'000,
               .bottleneck = "host_launch",
               .traced_parts = {},
               .unprofiled_parts = {},
               .unprofiled_path = {},
               .basis = "replayed",
               .anchor_note = {}};
  d.plan = {
      {.finding = "launch.overhead",
       .fix = "cuda_graphs",
       .step_ns = 14'080'000,
       .speedup = 1.42,
       .next_bottleneck = "compute",
       .within_accuracy = {{.finding = "precision.fp32_gemm", .fix = "bf16", .step_ns = 15'000'000, .speedup = 1.33}}},
      {.finding = "precision.fp32_gemm",
       .fix = "bf16",
       .step_ns = 9'870'000,
       .speedup = 2.03,
       .next_bottleneck = "communication",
       .within_accuracy = {}}};
  return d;
}

Diagnosis withoutPlan() {
  Diagnosis d;
  d.primary = "compute";
  d.step_ms = 10;
  d.findings = {finding("io.pageable_copies", "Copies from pageable memory")};
  d.what_if.basis = "no replay: one rank has no launches";
  return d;
}

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = s.find('\n', i);
    if (j == std::string::npos) j = s.size();
    out.push_back(s.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

// The lines from the one equal to `first` up to the next empty line (or the end).
std::vector<std::string> block(const std::string& s, const std::string& first) {
  std::vector<std::string> out;
  bool in = false;
  for (const auto& l : lines(s)) {
    if (l == first) in = true;
    if (in && l.empty()) break;
    if (in) out.push_back(l);
  }
  return out;
}

std::vector<std::string> keys(const nlohmann::ordered_json& j) {
  std::vector<std::string> k;
  for (const auto& [key, v] : j.items()) k.push_back(key);
  return k;
}

TEST(DiagnosisReport, JsonHasNextBottlenecksAndThePlan) {
  OneRank r;
  Diagnosis d = withPlan();
  auto j = nlohmann::ordered_json::parse(renderJson(r.run, 0.1, &d));
  const auto& dj = j["diagnosis"];
  const auto& fs = dj["findings"];
  ASSERT_EQ(fs.size(), 3u);
  EXPECT_EQ(fs[0]["what_if"]["next_bottleneck"], "compute");
  EXPECT_EQ(fs[0]["what_if"]["step_ns"], 14'000'000);
  EXPECT_TRUE(fs[1]["what_if"]["next_bottleneck"].is_null());
  EXPECT_FALSE(fs[2].contains("what_if"));
  EXPECT_EQ(keys(fs[0]["what_if"]),
            (std::vector<std::string>{"step_ns", "speedup", "next_bottleneck", "host_ns", "gpu_busy_ns", "basis"}));

  const auto& w = dj["what_if"];
  EXPECT_EQ(keys(w), (std::vector<std::string>{"traced_step_ns", "replayed_step_ns", "unprofiled_step_ns",
                                               "unprofiled_path_ns", "bottleneck", "traced_parts", "unprofiled_parts",
                                               "steps_replayed", "steps_in_trace", "basis"}));
  EXPECT_EQ(keys(w["traced_parts"]),
            (std::vector<std::string>{"host_ns", "gpu_ns", "gpu_busy_ns", "loader_ns", "bound"}));
  EXPECT_EQ(w["bottleneck"], "host_launch");
  EXPECT_EQ(w["unprofiled_step_ns"], 20'000'000);

  // The plan comes right after what_if.
  auto dk = keys(dj);
  auto at = std::find(dk.begin(), dk.end(), "what_if");
  ASSERT_NE(at, dk.end());
  ASSERT_NE(at + 1, dk.end());
  EXPECT_EQ(*(at + 1), "plan");
  const auto& plan = dj["plan"];
  ASSERT_TRUE(plan.is_array());
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(keys(plan[0]),
            (std::vector<std::string>{"finding", "fix", "step_ns", "speedup", "next_bottleneck", "within_accuracy"}));
  ASSERT_EQ(plan[0]["within_accuracy"].size(), 1u);
  EXPECT_EQ(keys(plan[0]["within_accuracy"][0]), (std::vector<std::string>{"finding", "fix", "step_ns", "speedup"}));
  EXPECT_EQ(plan[0]["within_accuracy"][0]["fix"], "bf16");
  EXPECT_EQ(plan[0]["within_accuracy"][0]["step_ns"], 15'000'000);
  EXPECT_TRUE(plan[1]["within_accuracy"].is_array());
  EXPECT_TRUE(plan[1]["within_accuracy"].empty());
  EXPECT_EQ(plan[0]["finding"], "launch.overhead");
  EXPECT_EQ(plan[0]["fix"], "cuda_graphs");
  EXPECT_EQ(plan[0]["step_ns"], 14'080'000);
  EXPECT_DOUBLE_EQ(plan[0]["speedup"].get<double>(), 1.42);
  EXPECT_EQ(plan[0]["next_bottleneck"], "compute");
  EXPECT_EQ(plan[1]["finding"], "precision.fp32_gemm");
  EXPECT_EQ(plan[1]["fix"], "bf16");
  EXPECT_EQ(plan[1]["step_ns"], 9'870'000);
  EXPECT_DOUBLE_EQ(plan[1]["speedup"].get<double>(), 2.03);
  EXPECT_EQ(plan[1]["next_bottleneck"], "communication");

  bool defined = false;
  for (const auto& def : j["definitions"])
    if (def.get<std::string>().rfind("what_if:", 0) == 0)
      defined = def.get<std::string>().find("plan") != std::string::npos &&
                def.get<std::string>().find("next_bottleneck") != std::string::npos;
  EXPECT_TRUE(defined) << "the what_if definition names plan and next_bottleneck";
}

TEST(DiagnosisReport, JsonPlanIsAnEmptyArrayWithoutTheReplay) {
  OneRank r;
  Diagnosis d = withoutPlan();
  auto j = nlohmann::ordered_json::parse(renderJson(r.run, 0.1, &d));
  const auto& dj = j["diagnosis"];
  ASSERT_TRUE(dj.contains("plan"));
  EXPECT_TRUE(dj["plan"].is_array());
  EXPECT_TRUE(dj["plan"].empty());
  EXPECT_TRUE(dj["what_if"]["bottleneck"].is_null());
  EXPECT_TRUE(dj["what_if"]["unprofiled_step_ns"].is_null());
  EXPECT_FALSE(dj["findings"][0].contains("what_if"));
}

TEST(DiagnosisReport, TerminalShowsNextBottleneckAndThePlan) {
  Diagnosis d = withPlan();
  std::string t = renderFindings(d, 0);
  EXPECT_NE(t.find("predicted (replay): 14.00 ms/step un-profiled after this fix, 1.43x, then limited by compute;\n"),
            std::string::npos)
      << t;
  // Unknown next bottleneck: the line says nothing about it.
  EXPECT_NE(t.find("predicted (replay): 15.50 ms/step un-profiled after this fix, 1.29x; bf16"), std::string::npos)
      << t;
  EXPECT_EQ(block(t, "Plan (predicted by replay, un-profiled step 20.00 ms)"),
            (std::vector<std::string>{
                "Plan (predicted by replay, un-profiled step 20.00 ms)",
                "  1. cuda_graphs (launch.overhead): 14.08 ms/step, 1.42x; then compute; as good within the replay's",
                "     accuracy (10 %): bf16 1.33x",
                "  2. bf16 (precision.fp32_gemm): 9.87 ms/step, 2.03x; then communication"}))
      << t;
  // After the findings.
  EXPECT_GT(t.find("\nPlan ("), t.find("Copies from pageable memory"));
  for (const auto& l : lines(t)) EXPECT_LE(l.size(), 100u) << l;
}

// The un-profiled step says how far an estimate from the trace alone goes, and how to anchor it;
// anchored, it says what it matched instead.
TEST(DiagnosisReport, TerminalSaysHowFarTheUnprofiledEstimateGoes) {
  Diagnosis d = withPlan();
  // The report's lines joined (wrapped lines continue after a two-space indent).
  auto flat = [](std::string t) {
    for (size_t i; (i = t.find("\n  ")) != std::string::npos;) t.replace(i, 3, " ");
    return t;
  };
  std::string alone = flat(renderFindings(d, 0));
  // 20 of 21 ms: the profiler's removed share is small, the lab's median stands.
  EXPECT_NE(alone.find("from the trace alone, expect it within about 4 % (the lab's jobs: 4 % in the median, up "
                       "to 51 %)"),
            std::string::npos)
      << alone;
  EXPECT_NE(alone.find("--measured-step-ms anchors it"), std::string::npos) << alone;
  EXPECT_NE(alone.find("traced 21.00 ms, the loop's steady state"), std::string::npos) << alone;
  // Half the traced step removed as the profiler's cost: that share's typical error, 0.28 x 50 %.
  Diagnosis half = d;
  half.what_if.unprofiled_step_ns = 10'500'000;
  EXPECT_NE(flat(renderFindings(half, 0)).find("expect it within about 14 %"), std::string::npos)
      << renderFindings(half, 0);
  d.what_if.measured_step_ns = 19'000'000;
  d.what_if.anchored = true;
  d.what_if.profiler_cost_factor = 1.2;
  std::string anchored = flat(renderFindings(d, 0));
  EXPECT_EQ(anchored.find("from the trace alone"), std::string::npos) << anchored;
  EXPECT_NE(anchored.find("matched to the measured 19.00 ms"), std::string::npos) << anchored;
  for (const auto& l : lines(renderFindings(d, 0))) EXPECT_LE(l.size(), 100u) << l;
}

TEST(DiagnosisReport, TerminalPlanIsNeverTruncatedAndWraps) {
  Diagnosis d = withPlan();
  d.plan.push_back({.finding = "communication.overlap_of_gradient_buckets",
                    .fix = "ddp_bucket_cap_mb_and_gradient_as_bucket_view_and_static_graph",
                    .step_ns = 9'000'000,
                    .speedup = 2.22,
                    .next_bottleneck = "other_idle",
                    .within_accuracy = {}});
  std::string t = renderFindings(d, 1);  // one finding shown, the plan in full
  EXPECT_NE(t.find("... 2 more in --json / --html"), std::string::npos) << t;
  EXPECT_EQ(t.find("GEMMs run in fp32"), std::string::npos) << t;
  auto plan = block(t, "Plan (predicted by replay, un-profiled step 20.00 ms)");
  ASSERT_EQ(plan.size(), 6u) << t;  // header, step 1 on two lines, step 2, step 3 on two lines
  EXPECT_EQ(plan[3], "  2. bf16 (precision.fp32_gemm): 9.87 ms/step, 2.03x; then communication");
  EXPECT_EQ(plan[4], "  3. ddp_bucket_cap_mb_and_gradient_as_bucket_view_and_static_graph");
  EXPECT_EQ(plan[5], "     (communication.overlap_of_gradient_buckets): 9.00 ms/step, 2.22x; then other_idle");
  for (const auto& l : lines(t)) EXPECT_LE(l.size(), 100u) << l;
}

TEST(DiagnosisReport, TerminalWithoutPlanPrintsNoPlanBlock) {
  Diagnosis d = withoutPlan();
  std::string t = renderFindings(d, 0);
  EXPECT_EQ(t.find("Plan"), std::string::npos) << t;
  EXPECT_EQ(t.find("predicted (replay)"), std::string::npos) << t;
  EXPECT_NE(t.find("Copies from pageable memory"), std::string::npos) << t;
}

TEST(DiagnosisReport, HtmlShowsPredictionsAndThePlanTable) {
  OneRank r;
  Diagnosis d = withPlan();
  d.plan[1].fix = "bf16 <autocast> & \"fused\"";
  std::string h = renderHtml(r.run, d);
  EXPECT_NE(h.find("Predicted by replay: 14.00 ms/step un-profiled after this fix, 1.43x, then limited by compute"),
            std::string::npos);
  EXPECT_NE(h.find("Predicted by replay: 15.50 ms/step un-profiled after this fix, 1.29x<br>"), std::string::npos);
  EXPECT_NE(h.find("<table id=plan><tr><th>step</th><th>fix</th><th>finding</th><th>predicted ms/step</th>"
                   "<th>speedup</th><th>then limited by</th><th>as good within the replay's accuracy (10 %)</th></tr>"),
            std::string::npos);
  EXPECT_NE(h.find("<tr><td>1</td><td>cuda_graphs</td><td>launch.overhead</td><td>14.08</td><td>1.42x</td>"
                   "<td>compute</td><td>bf16 1.33x</td></tr>"),
            std::string::npos);
  EXPECT_NE(h.find("<tr><td>2</td><td>bf16 &lt;autocast&gt; &amp; &quot;fused&quot;</td><td>precision.fp32_gemm</td>"
                   "<td>9.87</td><td>2.03x</td><td>communication</td><td>&mdash;</td></tr>"),
            std::string::npos);
  EXPECT_EQ(h.find("<autocast>"), std::string::npos);
  // One prediction per predicted finding; the plan after the findings.
  size_t n = 0;
  for (size_t at = h.find("Predicted by replay:"); at != std::string::npos; at = h.find("Predicted by replay:", at + 1))
    ++n;
  EXPECT_EQ(n, 2u);
  EXPECT_GT(h.find("<table id=plan>"), h.find("<div id=findings>"));
}

TEST(DiagnosisReport, HtmlWithoutPlanHasNoPlanTable) {
  OneRank r;
  Diagnosis d = withoutPlan();
  std::string h = renderHtml(r.run, d);
  EXPECT_EQ(h.find("id=plan"), std::string::npos);
  EXPECT_EQ(h.find("Predicted by replay"), std::string::npos);
  EXPECT_NE(h.find("Copies from pageable memory"), std::string::npos);
}

}  // namespace diagnosis_report_test
}  // namespace gpudoctor

namespace gpudoctor {
namespace diagnosis_report_test {
// A finding that states the floor its fix cannot take the step below says it in every format; the
// others carry null.
TEST(DiagnosisReport, AStatedFloorIsInEveryFormat) {
  OneRank r;
  Diagnosis d = withPlan();
  d.findings[0].floor_step_ms = 12.5;
  auto j = nlohmann::ordered_json::parse(renderJson(r.run, 0.1, &d));
  const auto& fs = j["diagnosis"]["findings"];
  EXPECT_EQ(fs[0]["floor_step_ms"], 12.5);
  EXPECT_TRUE(fs[1]["floor_step_ms"].is_null());
  std::string t;  // the terminal's lines joined: the bracket may wrap
  for (const char c : renderFindings(d, 0))
    if (c != '\n' && !(c == ' ' && !t.empty() && t.back() == ' ')) t += c;
  EXPECT_NE(t.find("the step stays >= 12.50 ms"), std::string::npos) << t;
  EXPECT_EQ(t.find("the step stays", t.find("the step stays") + 1), std::string::npos) << t;
  EXPECT_NE(renderHtml(r.run, d).find("the step stays &ge; 12.50 ms"), std::string::npos);
}

TEST(DiagnosisReport, CountsInEvidenceAreWholeNumbers) {
  Diagnosis d;
  Finding f;
  f.id = "nccl.settings";
  f.title = "NCCL settings: 2 ignored by NCCL, 0 wrong, 0 slow";
  f.evidence = {{"ignored", 2, "settings"}, {"share", 0.125, ""}, {"step", 12.5, "ms"}};
  d.findings.push_back(f);
  std::string t = renderFindings(d, 1);
  EXPECT_NE(t.find("ignored 2 settings; share 0.12; step 12.50 ms"), std::string::npos) << t;
  EXPECT_EQ(t.find("2.00 settings"), std::string::npos) << t;
}
}  // namespace diagnosis_report_test
}  // namespace gpudoctor

namespace gpudoctor {
namespace diagnosis_report_test {
TEST(DiagnosisReport, JsonEvidenceAlsoInBaseUnits) {
  OneRank r;
  Diagnosis d;
  Finding f;
  f.id = "host.launch_overhead";
  f.evidence = {{"idle", 12.5, "ms/step"},
                {"share", 50.7, "%"},
                {"peak", 1.5, "GiB"},
                {"latency", 7.25, "us"},
                {"ignored", 2, "settings"}};
  d.findings.push_back(f);
  auto j = nlohmann::ordered_json::parse(renderJson(r.run, 0.1, &d));
  const auto& ev = j["diagnosis"]["findings"][0]["evidence"];
  ASSERT_EQ(ev.size(), 5u);
  EXPECT_EQ(ev[0]["value"], 12.5);  // as the terminal shows it
  EXPECT_EQ(ev[0]["base_value"], 12'500'000);
  EXPECT_EQ(ev[0]["base_unit"], "ns/step");
  EXPECT_DOUBLE_EQ(ev[1]["base_value"].get<double>(), 0.507);
  EXPECT_EQ(ev[1]["base_unit"], "share");
  EXPECT_EQ(ev[2]["base_value"], 1610612736);
  EXPECT_EQ(ev[3]["base_value"], 7250);
  EXPECT_EQ(ev[4]["base_value"], 2.0);
  EXPECT_EQ(ev[4]["base_unit"], "settings");
}
}  // namespace diagnosis_report_test
}  // namespace gpudoctor
