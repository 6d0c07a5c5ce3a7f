// `gpudoctor bench gpu` and `analyze --ceilings` as a user runs them on a host without a GPU: one-line
// errors, datasheet ceilings, efficiency figures on the bundled example trace.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>
#include "cli/cli_test_util.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace {

namespace fs = std::filesystem;

using namespace gpudoctor::testing;  // NOLINT: the shared CLI test helpers

bool haveGpu() { return fs::exists("/dev/nvidiactl") || fs::exists("/dev/nvidia0"); }

TEST(BenchGpuCli, HelpAndUsageErrors) {
  auto h = run("bench gpu --help");
  EXPECT_EQ(h.rc, 0);
  EXPECT_NE(h.out.find("--ceilings-out"), std::string::npos);
  EXPECT_NE(h.out.find("--quick"), std::string::npos);
  auto bad = run("bench gpu --only gemm,tensor");
  EXPECT_EQ(bad.rc, 2);
  EXPECT_EQ(lines(bad.err), 1) << bad.err;
  EXPECT_NE(bad.err.find("unknown part \"tensor\""), std::string::npos) << bad.err;
  auto sheet = run("bench gpu --datasheet A100");
  EXPECT_EQ(sheet.rc, 2);
  EXPECT_EQ(lines(sheet.err), 1) << sheet.err;
}

TEST(BenchGpuCli, WithoutAGpuOneLineAndExit4) {
  if (haveGpu()) GTEST_SKIP() << "this host has an NVIDIA device";
  auto r = run("bench gpu --quick");
  EXPECT_EQ(r.rc, 4) << r.out << r.err;  // not on this machine (exit_codes.h)
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("gpudoctor: error: ", 0), 0u) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST(BenchGpuCli, DatasheetCeilingsFeedAnalyze) {
  fs::path d = scratch();
  std::string c = (d / "h200.json").string();
  auto w = run("bench gpu --datasheet H200 --ceilings-out " + c);
  ASSERT_EQ(w.rc, 0) << w.err;
  auto j = nlohmann::json::parse(std::ifstream(c));
  EXPECT_EQ(j["tflops"]["bf16"], 989.5);
  // The bundled example: 2 ranks of BF16 training on H200.
  auto a = run("analyze -q --ceilings " + c + " --flops-per-step 1e12");
  ASSERT_EQ(a.rc, 0) << a.err;
  EXPECT_NE(a.out.find("Efficiency against the ceilings of NVIDIA H200 SXM (datasheet)"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("mean MFU"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("Per rank"), std::string::npos);  // the usual report is still there
  auto no_flops = run("analyze -q --ceilings " + c);
  ASSERT_EQ(no_flops.rc, 0) << no_flops.err;
  EXPECT_NE(no_flops.out.find("not computed: MFU: the trace does not record FLOPs"), std::string::npos) << no_flops.out;
  auto js = run("analyze -q --ceilings " + c + " --flops-per-step 1e12 --json -");
  ASSERT_EQ(js.rc, 0) << js.err;
  auto doc = nlohmann::json::parse(js.out);
  EXPECT_EQ(doc["efficiency"]["ranks"].size(), 2u);
  EXPECT_GT(doc["efficiency"]["mean_mfu"].get<double>(), 0);
  EXPECT_TRUE(doc.contains("ranks") || doc.size() > 2);  // the existing keys are kept
}

TEST(BenchGpuCli, BadCeilingsFileIsOneLineNamingTheKey) {
  fs::path d = scratch();
  std::string c = (d / "bad.json").string();
  std::ofstream(c) << R"({"tflops": {"bf16": 900}, "bandwidth_gbps": {"hbm": 3000}})";
  auto a = run("analyze -q --ceilings " + c);
  EXPECT_EQ(a.rc, 3);  // the file is bad input
  EXPECT_EQ(lines(a.err), 1) << a.err;
  EXPECT_NE(a.err.find("bandwidth_gbps.hbm: unknown key"), std::string::npos) << a.err;
  auto f = run("analyze -q --flops-per-step 1e12");
  EXPECT_EQ(f.rc, 2);
  EXPECT_NE(f.err.find("need --ceilings"), std::string::npos) << f.err;
}

}  // namespace
