// The terminal as a user meets it: critical findings first; fixes as blocks that paste.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"

namespace gpudoctor::testing {
namespace {

// The bundled example and two what-if traces: the critical findings lead, then warnings, then info.
TEST(CliReport, FindingsBySeverity) {
  for (const std::string& trace :
       {std::string("examples/ddp_bf16_flash"), std::string("testdata/whatif/vit_fp32__base.pt.trace.json.gz"),
        std::string("testdata/whatif/token_loader_bf16__base.pt.trace.json.gz")}) {
    auto r = run("analyze -q --findings 50 " + src(trace));
    ASSERT_EQ(r.rc, 0) << r.err;
    std::istringstream in(r.out);
    const std::vector<std::string> order = {"critical", "warning", "info"};
    size_t rank = 0, n = 0;
    std::regex title(R"(^ (\d+)\. \[(\w+)\])");
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (!std::regex_search(line, m, title)) continue;
      EXPECT_EQ(std::stoul(m[1].str()), ++n) << line;
      size_t at = std::find(order.begin(), order.end(), m[2].str()) - order.begin();
      EXPECT_GE(at, rank) << trace << ": " << line << "\n" << r.out;
      rank = std::max(rank, at);
    }
    EXPECT_GT(n, 1u) << r.out;
  }
  auto ex = run("analyze -q");
  EXPECT_NE(ex.out.find(" 1. [critical] "), std::string::npos) << ex.out;
}

// The fixes print as a "fix:" line and the code under it, four columns in, nothing else on its lines.
TEST(CliReport, FixesAreBlocksThatPaste) {
  auto r = run("analyze -q");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(
      r.out.find("    fix:\n"
                 "        # overlap gradient allreduce with backward (DDP does by default; keep buckets moderate):\n"
                 "        model = DDP(model, bucket_cap_mb=25, gradient_as_bucket_view=True)\n"),
      std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("fix: "), std::string::npos) << "no code line carries a prefix: " << r.out;
}

}  // namespace
}  // namespace gpudoctor::testing
