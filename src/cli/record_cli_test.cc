// `gpudoctor record` as a user meets it without a GPU (CI): every usage problem is one line and
// exit 2 before anything runs; and `analyze` reads committed recordings like traces.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli_test_util.h"

namespace gpudoctor {
namespace {

using testing::run;

std::string rec(const std::string& name) { return std::string(GPUDOCTOR_SOURCE_DIR) + "/testdata/record/" + name; }

void expectUsage(const testing::Run& r, const std::string& says) {
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(RecordCli, UsageErrorsBeforeAnythingRuns) {
  expectUsage(run("record"), "record needs a command after --");
  expectUsage(run("record --signal HUP -- true"), "--signal HUP: expected USR1 or USR2");
  expectUsage(run("record --detached -- true"), "--detached records nothing");
  expectUsage(run("record --nvtx-step '(' -- true"), "not a regular expression");
  expectUsage(run("record --delay -3 -- true"), "--delay");
  expectUsage(run("record --sample 3 -- true"), "--sample 3: expected ON/EVERY");
  expectUsage(run("record --sample 5/2 -- true"), "shorter than EVERY");
  expectUsage(run("record --sample 0.01/2 -- true"), "at least 0.1 s");
  expectUsage(run("record --sample 1/10 --signal USR1 -- true"), "not with --signal or --detached");
  expectUsage(run("record --steps 5-3 -- true"), "expected 1 <= N <= M");
  expectUsage(run("record --steps 0-3 -- true"), "expected 1 <= N <= M");
  expectUsage(run("record --steps 3-x -- true"), "--steps 3-x: expected N-M");
  expectUsage(run("record --steps -3 -- true"), "expected N-M");
  expectUsage(run("record --steps 2-4 --delay 5 -- true"), "not with --delay");
  expectUsage(run("record --duration 0 -- true"), "--duration");
  expectUsage(run("record -- true", "CUDA_INJECTION64_PATH=/opt/nsys/libinj.so"),
              "CUDA_INJECTION64_PATH is already set");
}

TEST(RecordCli, NoDriverIsOneLine) {
  if (void* h = dlopen("libcuda.so.1", RTLD_LAZY)) {
    dlclose(h);
    GTEST_SKIP() << "an NVIDIA driver is installed here (the GPU test record_gpu covers this machine)";
  }
  auto d = testing::scratch() / "rec_nodriver";
  auto r = run("record -o " + d.string() + " -- true");
  EXPECT_EQ(r.rc, 4) << r.err;  // not on this machine (exit_codes.h)
  EXPECT_NE(r.err.find("no NVIDIA driver"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(std::filesystem::exists(d)) << "nothing is created before the checks pass";
}

TEST(RecordCli, AnalyzeReadsRecordingsLikeTraces) {
  testing::Run r = run("analyze " + rec("ddp"));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("2 ranks, 7 steps (steps #1..#7)"), std::string::npos) << r.out.substr(0, 300);
  testing::Run j = run("analyze " + rec("cuda_program.gdrec.gz") + " --json -");
  ASSERT_EQ(j.rc, 0) << j.err;
  auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["ranks"][0]["steps"].size(), 19u);
}

}  // namespace
}  // namespace gpudoctor
