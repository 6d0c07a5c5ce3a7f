// Every verb's --help as a user sees it: within 100 columns, with examples, and every example a
// command line gpudoctor accepts (parsed with GPUDOCTOR_PARSE_ONLY=1: flags and values checked,
// nothing run).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"

namespace gpudoctor::testing {
namespace {

const char* const kVerbs[] = {"analyze",    "checklist", "compare",        "nccl",  "nccl env", "nccl log",
#ifdef GPUDOCTOR_HAVE_CUDA
                              "nccl bench", "nccl tune",
#endif
                              "plan",       "topo",      "place",          "pack",  "bench",    "bench io",
                              "bench gpu",  "monitor",   "monitor report", "record"};

TEST(CliHelp, EveryVerbFitsOneHundredColumnsAndItsExamplesParse) {
  auto top = run("--help");
  ASSERT_EQ(top.rc, 0);
  std::vector<std::string> verbs(std::begin(kVerbs), std::end(kVerbs));
  verbs.push_back("");
  for (const auto& v : verbs) {
    auto r = run(v + " --help");
    ASSERT_EQ(r.rc, 0) << v << ": " << r.err;
    std::istringstream lines(r.out);
    std::string line;
    int examples = 0;
    bool in_examples = false;
    while (std::getline(lines, line)) {
      EXPECT_LE(line.size(), 100u) << "gpudoctor " << v << " --help: " << line;
      EXPECT_EQ(line.find("INT:"), std::string::npos) << v << ": CLI11 type noise: " << line;
      if (line == "Examples:") {
        in_examples = true;
        continue;
      }
      if (line.rfind("  ", 0) != 0) in_examples = false;
      size_t at = line.find("gpudoctor ");
      if (!in_examples || at == std::string::npos) continue;
      std::string cmd = line.substr(at + 10);
      cmd = cmd.substr(0, cmd.find('#'));
      cmd = cmd.substr(0, cmd.find("&&"));
      while (!cmd.empty() && cmd.back() == ' ') cmd.pop_back();
      ++examples;
      auto p = run(cmd, "GPUDOCTOR_PARSE_ONLY=1");
      EXPECT_EQ(p.rc, 0) << "example of " << v << " does not parse: gpudoctor " << cmd << "\n" << p.err;
    }
    if (!v.empty()) {
      EXPECT_GE(examples, 1) << v << " has no example";
    }
  }
}

// Every short flag of every verb, from the help: one long name per letter across gpudoctor, and
// -q's one description (it had five: "no progress", "no summary line", "no view and no notes",
// ...); -d meant --duration in monitor and --dtype in nccl bench and tune. nccl tune's -r and -o
// (nccl-tests' root rank and reduction operation) and monitor's -d are refused with the long name.
TEST(CliHelp, EveryShortFlagHasOneMeaning) {
  std::map<std::string, std::set<std::string>> longs, texts;
  std::regex row(R"(^  (-[A-Za-z]),(--[a-z0-9-]+)\S*( [A-Z|]+)?\s+(.*)$)");
  for (const char* v : kVerbs) {
    auto r = run(std::string(v) + " --help");
    ASSERT_EQ(r.rc, 0) << v << ": " << r.err;
    std::istringstream lines(r.out);
    std::string line;
    std::smatch m;
    while (std::getline(lines, line)) {
      if (!std::regex_match(line, m, row) || m[1] == "-h") continue;
      longs[m[1]].insert(m[2]);
      texts[m[1]].insert(m[4]);
    }
  }
  ASSERT_TRUE(longs.count("-q"));
  for (const auto& [flag, names] : longs) {
    std::string all;
    for (const auto& n : names) all += " " + n;
    EXPECT_EQ(names.size(), 1u) << flag << " means" << all;
  }
  EXPECT_EQ(texts["-q"].size(), 1u) << "-q is described " << texts["-q"].size() << " ways";
#ifdef GPUDOCTOR_HAVE_CUDA
  EXPECT_EQ(longs["-d"], std::set<std::string>{"--dtype"});
  for (const char* old : {"-r 3", "-o tuner.csv"}) {
    auto t = run(std::string("nccl tune ") + old, "GPUDOCTOR_PARSE_ONLY=1");
    EXPECT_EQ(t.rc, 2) << old;
    EXPECT_NE(t.err.find("nccl-tests"), std::string::npos) << t.err;
  }
#endif
  auto d = run("monitor -d 2 --no-gpu", "GPUDOCTOR_PARSE_ONLY=1");
  EXPECT_EQ(d.rc, 2);
  EXPECT_NE(d.err.find("write --duration"), std::string::npos) << d.err;
}

}  // namespace
}  // namespace gpudoctor::testing

namespace gpudoctor::testing {
namespace {

// plan and place print within 100 columns (issue 20: up to 177); commands keep working when pasted
// (long ones continue with " \").
TEST(CliWidth, PlanAndPlaceFitOneHundredColumns) {
  const std::vector<std::string> commands = {
      "place --nodes 2 --gpus-per-node 8 --topology " + src("testdata/topology/cluster_small.toml"),
      "place --gpus 3 --free 0,1,2,4,5 --topology " + src("testdata/topology/dgx1_v100.toml"),
      "plan --model llama2-7b --gpu h100 --gpus-per-node 8 --nodes 2 --global-batch 512",
      "plan --model gpt2 --gpus-per-node 2 --global-batch 16 --micro-batch 8 --recompute none --zero 0 --from-trace " +
          src("examples/ddp_bf16_flash"),
  };
  for (const auto& c : commands) {
    auto r = run(c);
    ASSERT_TRUE(r.rc == 0 || r.rc == 1) << c << ": " << r.err;
    std::istringstream in(r.out);
    std::string line, prev;
    bool sbatch = false;
    while (std::getline(in, line)) {
      EXPECT_LE(line.size(), 100u) << c << ": " << line;
      if (prev.find("sbatch ") != std::string::npos && prev.back() == '\\') sbatch = true;
      prev = line;
    }
    if (c.rfind("place --nodes", 0) == 0) {
      EXPECT_TRUE(sbatch) << r.out;  // the long sbatch line continues
    }
  }
}

// The report's prose follows the terminal's width (COLUMNS here), between 80 and 160 columns; a
// finding's title continues under its text, not at column 1.
TEST(CliWidth, AnalyzeFollowsColumns) {
  for (int cols : {80, 100, 160}) {
    auto r = run("analyze", "COLUMNS=" + std::to_string(cols));
    ASSERT_EQ(r.rc, 0) << r.err;
    std::istringstream in(r.out);
    std::string line;
    size_t widest = 0, titles = 0;
    bool after_title = false;
    while (std::getline(in, line)) {
      if (after_title) {
        EXPECT_EQ(line.rfind("    ", 0), 0u) << cols << ": a title's next line is indented: " << line;
      }
      after_title = line.size() > 4 && line[0] == ' ' && std::isdigit(static_cast<unsigned char>(line[1])) &&
                    line.find(". [") != std::string::npos && line.find(". [") < 5;
      titles += after_title;
      // The findings' prose (evidence, why, gain, predicted) wraps; code lines (fix:) and tables keep
      // their layout so that they paste and align.
      if (line.size() > 4 && line.rfind("    ", 0) == 0 && std::isalpha(static_cast<unsigned char>(line[4])) &&
          line.rfind("    fix:", 0) != 0)
        widest = std::max(widest, line.size());
    }
    EXPECT_GT(titles, 2u) << r.out;
    EXPECT_LE(widest, static_cast<size_t>(cols)) << cols;
    if (cols == 160) {
      EXPECT_GT(widest, 100u) << "a wide terminal gets wide lines";
    }
  }
  EXPECT_EQ(run("analyze", "COLUMNS=20").rc, 0) << "a narrow terminal gets 80 columns, not an error";
}

// The header's notes (here: GPU work outside the annotated steps) wrap at the width too, their
// continuation lines under the note's text.
TEST(CliWidth, HeaderNotesWrap) {
  auto r = run("analyze " + src("testdata/lab/dlrm_embeddingbag__base.pt.trace.json.gz"), "COLUMNS=80");
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::string head = r.out.substr(0, r.out.find("\nJob:"));
  ASSERT_NE(head.find("  note: rank 0: 2 GPU operations"), std::string::npos) << head;
  std::istringstream in(head);
  std::string line;
  bool in_note = false;
  while (std::getline(in, line)) {
    EXPECT_LE(line.size(), 80u) << line;
    if (in_note && line.rfind("  note:", 0) != 0) {
      EXPECT_EQ(line.rfind("    ", 0), 0u) << "a note's next line is indented: " << line;
    }
    in_note = in_note || line.rfind("  note:", 0) == 0;
  }
}

// compare lays its text out in the terminal's width (COLUMNS, 80 to 160): no line longer, and a wide
// terminal gets the kernels' longer names.
TEST(CliWidth, CompareFollowsColumns) {
  auto w = [](const std::string& t) { return src("testdata/whatif/" + t + ".pt.trace.json.gz"); };
  const std::vector<std::string> pairs = {w("gpt_fp32_naive__base") + " " + w("gpt_fp32_naive__bf16"),
                                          w("gpt_launch_bound__cuda_graphs") + " " + w("gpt_launch_bound__base")};
  for (const auto& p : pairs)
    for (int cols : {80, 160}) {
      auto r = run("compare --fail-if-slower 3 " + p, "COLUMNS=" + std::to_string(cols));
      ASSERT_TRUE(r.rc == 0 || r.rc == 1) << r.err;
      std::istringstream in(r.out);
      size_t widest = 0;
      for (std::string line; std::getline(in, line);) {
        EXPECT_LE(line.size(), static_cast<size_t>(cols)) << p << ": " << line;
        widest = std::max(widest, line.size());
      }
      if (cols == 160) {
        EXPECT_GT(widest, 100u) << "a wide terminal gets wide lines: " << r.out;
      }
    }
}

// topo lays the matrix out in the terminal's width: the columns that fit, the rest in a block below
// with the row names again; the legend wraps. The first line names the file, whole.
TEST(CliWidth, TopoFollowsColumns) {
  for (const char* f : {"dgx_h100", "dgx_a100", "dgx1_v100", "pcie_8gpu_2socket", "workstation_4gpu_nvlink_pairs"})
    for (int cols : {80, 160}) {
      auto r = run("topo --topology " + src(std::string("testdata/topology/") + f + ".toml"),
                   "COLUMNS=" + std::to_string(cols));
      ASSERT_EQ(r.rc, 0) << r.err;
      std::istringstream in(r.out);
      std::string line;
      std::getline(in, line);
      int headers = 0;
      while (std::getline(in, line)) {
        EXPECT_LE(line.size(), static_cast<size_t>(cols)) << f << ": " << line;
        headers += line.find("GPU0  GPU1") != std::string::npos && line.rfind("GPU0", 0) != 0;
      }
      if (cols == 160) {
        EXPECT_EQ(headers, 1) << f << ": the whole matrix in one block: " << r.out;
      }
      EXPECT_NE(r.out.find("NUMA Affinity"), std::string::npos) << r.out;
    }
}

// bench io's table and prose fit the terminal's width (at 80 columns a tighter table).
TEST(CliWidth, BenchIoFollowsColumns) {
  auto d = scratch() / "bench_width";
  std::filesystem::create_directories(d);
  for (int cols : {80, 160}) {
    auto r = run("bench io " + d.string() +
                     " --large-size 4M --files 40 --file-size 4K --shard-size 64K --threads 1,2 --seconds 0.02 "
                     "--no-cold --target-samples 1000",
                 "COLUMNS=" + std::to_string(cols));
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("warm GB/s"), std::string::npos) << r.out;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) EXPECT_LE(line.size(), static_cast<size_t>(cols)) << line;
  }
  std::filesystem::remove_all(d);
}

}  // namespace
}  // namespace gpudoctor::testing
