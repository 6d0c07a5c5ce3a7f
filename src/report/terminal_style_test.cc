// The terminal reports as a user reads them: critical findings first, code fixes as blocks that
// paste.
#include <algorithm>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "report/findings_text.h"

namespace gpudoctor {
namespace {

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

}  // namespace
}  // namespace gpudoctor
