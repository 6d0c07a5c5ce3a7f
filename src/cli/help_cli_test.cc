// Every verb's --help as a user sees it: within 100 columns, with examples, and every example a
// command line gpudoctor accepts (parsed with GPUDOCTOR_PARSE_ONLY=1: flags and values checked,
// nothing run).
#include <gtest/gtest.h>

#include <sstream>

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

}  // namespace
}  // namespace gpudoctor::testing
