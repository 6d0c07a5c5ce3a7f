// The terminal reports as a user reads them: critical findings first, code fixes as blocks that
// paste, and colour (report/style.h) that adds escapes to the plain text and changes nothing else.
#include <algorithm>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "analysis/run_test_util.h"
#include "diagnosis/diagnosis.h"
#include "report/compare_report.h"
#include "report/findings_text.h"
#include "report/style.h"
#include "report/terminal.h"
#include "report/text.h"

namespace gpudoctor {
namespace terminal_style_test {
std::string strip(const std::string& s) { return std::regex_replace(s, std::regex("\x1b\\[[0-9;]*m"), ""); }

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

Finding finding(const std::string& id, Severity s, const std::string& title) {
  Finding f;
  f.id = id;
  f.title = title;
  f.severity = s;
  f.explanation = "because";
  return f;
}

// Five findings out of severity order, as the diagnosis can leave them (its headline first); the
// titles long enough to wrap.
Diagnosis mixed() {
  const std::string tail = ": a title long enough to wrap onto a second line of the report at one hundred columns";
  Diagnosis d;
  d.findings = {finding("bottleneck.host", Severity::kInfo, "info one" + tail),
                finding("launch.overhead", Severity::kCritical, "critical one" + tail),
                finding("io.pageable", Severity::kWarning, "warning one" + tail),
                finding("comm.exposed", Severity::kCritical, "critical two" + tail),
                finding("profiler.options", Severity::kInfo, "info two" + tail)};
  return d;
}

// The titles in the order the terminal lists them.
std::vector<std::string> titles(const std::string& text) {
  std::vector<std::string> v;
  std::regex title(R"(^ \d+\. \[(\w+)\] (\w+ \w+):)");
  for (const auto& l : lines(text))
    if (std::smatch m; std::regex_search(l, m, title)) v.push_back(m[1].str() + " " + m[2].str());
  return v;
}

TEST(FindingsOrder, CriticalThenWarningThenInfoEachInTheDiagnosisOrder) {
  const std::string t = renderFindings(mixed(), 0);
  EXPECT_EQ(titles(t), (std::vector<std::string>{"critical critical one", "critical critical two",
                                                 "warning warning one", "info info one", "info info two"}))
      << t;
  EXPECT_NE(t.find(" 1. [critical] critical one"), std::string::npos) << t;
  EXPECT_NE(t.find(" 5. [info] info two"), std::string::npos) << t;
}

TEST(FindingsOrder, AShortListKeepsTheMostSevere) {
  const std::string t = renderFindings(mixed(), 2);
  EXPECT_EQ(titles(t), (std::vector<std::string>{"critical critical one", "critical critical two"})) << t;
  EXPECT_NE(t.find("  ... 3 more in --json / --html\n"), std::string::npos) << t;
}

TEST(FindingsOrder, WithoutTheReplayTheHeadingSaysSeverityFirst) {
  const std::string t = renderFindings(mixed(), 0);
  EXPECT_EQ(t.rfind("Findings by severity; in each, by the step time a fix can save (upper bounds)\n", 0), 0u) << t;
}

TEST(FixBlock, CodeLinesPasteAsWritten) {
  Diagnosis d;
  Finding f = finding("nccl.env", Severity::kWarning, "NCCL settings");
  f.fix = {"export NCCL_ALGO=Ring", "torchrun --nproc-per-node 8 train.py \\", "    --batch-size 64", "",
           "# a comment long enough that it would be wrapped if it were prose, which it must never be, at any width"};
  d.findings = {f};
  const std::string t = renderFindings(d, 0);
  const std::string block =
      "    fix:\n"
      "        export NCCL_ALGO=Ring\n"
      "        torchrun --nproc-per-node 8 train.py \\\n"
      "            --batch-size 64\n"
      "\n"
      "        # a comment long enough that it would be wrapped if it were prose, which it must never be, at any "
      "width\n";
  EXPECT_NE(t.find(block), std::string::npos) << t;
  // The block less its indentation is the fix, line for line: nothing but code on those lines.
  const auto all = lines(t);
  auto at = std::find(all.begin(), all.end(), "    fix:");
  ASSERT_NE(at, all.end()) << t;
  std::vector<std::string> pasted;
  for (auto it = at + 1; it != all.end() && (it->empty() || it->rfind("        ", 0) == 0); ++it)
    pasted.push_back(it->empty() ? "" : it->substr(8));
  EXPECT_EQ(pasted, f.fix) << t;
  EXPECT_EQ(t.find("fix: "), std::string::npos) << "no code line carries a prefix: " << t;
}

TEST(FixBlock, NoFixNoBlock) {
  Diagnosis d;
  d.findings = {finding("a.b", Severity::kInfo, "nothing to change")};
  EXPECT_EQ(renderFindings(d, 0).find("fix:"), std::string::npos);
}

TEST(TerminalStyle, PaintIsTheTextItselfWhenOff) {
  EXPECT_EQ(paint("Plan", Tone::kHeading, false), "Plan");
  EXPECT_EQ(paint("Plan", Tone::kHeading, true), "\x1b[1mPlan\x1b[0m");
  EXPECT_EQ(paint("", Tone::kCritical, true), "");
  EXPECT_EQ(paintFront("fail   ", 4, Tone::kCritical, true), "\x1b[31mfail\x1b[0m   ");
  EXPECT_EQ(paintFront("fail   ", 4, Tone::kCritical, false), "fail   ");
}

TEST(TerminalStyle, FindingsInColourAreThePlainTextWithEscapes) {
  Diagnosis d = mixed();
  d.findings[1].fix = {"model = torch.compile(model)"};
  const std::string plain = renderFindings(d, 0), colored = renderFindings(d, 0, true);
  EXPECT_EQ(plain.find('\x1b'), std::string::npos) << plain;
  EXPECT_NE(colored, plain);
  EXPECT_EQ(strip(colored), plain) << "colour changes no width, break or character";
  EXPECT_NE(colored.find("\x1b[1mFindings by severity"), std::string::npos) << colored;
  EXPECT_NE(colored.find(" 1. \x1b[31m[critical]\x1b[0m critical one"), std::string::npos) << colored;
  EXPECT_NE(colored.find(" 3. \x1b[33m[warning]\x1b[0m warning one"), std::string::npos) << colored;
  EXPECT_NE(colored.find(" 4. \x1b[2m[info]\x1b[0m info one"), std::string::npos) << colored;
  // The code stays plain, to paste.
  EXPECT_NE(colored.find("    fix:\n        model = torch.compile(model)\n"), std::string::npos) << colored;
  for (const auto& l : lines(strip(colored))) EXPECT_LE(l.size(), textWidth()) << l;
}

TEST(TerminalStyle, ChecklistStatusInColour) {
  Diagnosis d;
  d.checklist = {{"compute", "GPU utilization > 90%", CheckStatus::kFail, "busy 40%"},
                 {"compute", "Mixed precision", CheckStatus::kPass, "bf16"},
                 {"io", "Pinned memory", CheckStatus::kUnknown, "no copies"}};
  const std::string plain = renderChecklist(d), colored = renderChecklist(d, true);
  EXPECT_EQ(plain.find('\x1b'), std::string::npos);
  EXPECT_EQ(strip(colored), plain);
  EXPECT_NE(colored.find("\x1b[31mfail\x1b[0m           \n"), std::string::npos) << colored;
  EXPECT_NE(colored.find("\x1b[32mpass\x1b[0m"), std::string::npos) << colored;
  EXPECT_EQ(colored.find("\x1b[31mnot measurable"), std::string::npos) << colored;
  EXPECT_EQ(colored.rfind("\x1b[1mChecklist\x1b[0m\n", 0), 0u) << colored;
}

TEST(TerminalStyle, ReportOfARealRunHasBoldHeadingsAndTheSameLayout) {
  auto l = testing::loadRun({testing::srcPath("examples/ddp_bf16_flash")});
  TerminalOptions off, on;
  on.color = true;
  const std::string plain = renderTerminal(l->run, off), colored = renderTerminal(l->run, on);
  EXPECT_EQ(plain.find('\x1b'), std::string::npos);
  EXPECT_EQ(strip(colored), plain);
  for (const char* h :
       {"gpudoctor analyze: 2 ranks", "Per rank, mean per step", "Steps of rank 0 (ms)", "Host side of rank 0",
        "Kernel classes, all ranks", "Top 10 kernels by total time", "Collectives", "Stragglers"})
    EXPECT_NE(colored.find(std::string("\x1b[1m") + h), std::string::npos) << h;
  // The tables' rows carry no escape: their columns line up as before.
  for (const auto& line : lines(colored))
    if (line.find('\x1b') != std::string::npos) {
      EXPECT_EQ(line.rfind("\x1b[1m", 0), 0u) << line;
    }

  const Diagnosis d = diagnose(l->run, Thresholds::defaults(), {});
  EXPECT_EQ(strip(renderFindings(d, 8, true)), renderFindings(d, 8));
}

TEST(TerminalStyle, CompareVerdictAndHeadingsInColour) {
  CompareResult r;
  r.ranks = 1;
  r.basis = "traced (median)";
  r.verdict = "slower";
  r.speedup = 0.8, r.speedup_low = 0.75, r.speedup_high = 0.85, r.change = 0.25, r.band = 0.05;
  r.categories = {{"compute", 1e6, 2e6}};
  r.warnings = {"another GPU"};
  CompareLabels labels{"base/", "new/", 3};
  const std::string plain = renderCompareTerminal(r, labels), colored = renderCompareTerminal(r, labels, true);
  EXPECT_EQ(plain.find('\x1b'), std::string::npos);
  EXPECT_EQ(strip(colored), plain);
  EXPECT_NE(colored.find("Verdict: \x1b[31mslower by 25.0 %"), std::string::npos) << colored;
  EXPECT_NE(colored.find("\x1b[31mFAILED (slower beyond the noise band)\x1b[0m"), std::string::npos) << colored;
  EXPECT_NE(colored.find("  \x1b[33mwarning:\x1b[0m another GPU"), std::string::npos) << colored;
  EXPECT_NE(colored.find("\x1b[1mJob differences (the likely causes)\x1b[0m"), std::string::npos) << colored;
  r.verdict = "faster";
  EXPECT_NE(renderCompareTerminal(r, labels, true).find("Verdict: \x1b[32mfaster"), std::string::npos);
}

}  // namespace terminal_style_test
}  // namespace gpudoctor
