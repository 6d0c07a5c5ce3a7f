// Every verb's --help as a user sees it: within 100 columns, with examples, and every example a
// command line gpudoctor accepts (parsed with GPUDOCTOR_PARSE_ONLY=1: flags and values checked,
// nothing run).
#include <gtest/gtest.h>

#include <sstream>

#include "cli/cli_test_util.h"

namespace gpudoctor::testing {
namespace {

const char* const kVerbs[] = {"analyze", "checklist", "compare", "nccl", "nccl env", "nccl log",
#ifdef GPUDOCTOR_HAVE_CUDA
                              "nccl bench", "nccl tune",
#endif
                              "plan", "topo", "place", "pack", "bench", "bench io", "bench gpu", "monitor",
                              "monitor report", "record"};

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
    if (!v.empty()) EXPECT_GE(examples, 1) << v << " has no example";
  }
}

}  // namespace
}  // namespace gpudoctor::testing
