// `gpudoctor pack` and `gpudoctor bench io` as a user runs them: help, exit codes, one-line errors,
// JSON that parses, progress only on request when stderr is not a terminal.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>
#include "cli/cli_test_util.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace {

namespace fs = std::filesystem;

using namespace gpudoctor::testing;  // NOLINT: the shared CLI test helpers

void expectOneLineError(const Run& r, int rc, const std::string& needle) {
  EXPECT_EQ(r.rc, rc) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("gpudoctor: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
}

TEST(IoCli, HelpExplains) {
  auto p = run("pack --help");
  EXPECT_EQ(p.rc, 0);
  EXPECT_NE(p.out.find("WebDataset"), std::string::npos);
  EXPECT_NE(p.out.find("--shuffle"), std::string::npos);
  auto b = run("bench io --help");
  EXPECT_EQ(b.rc, 0);
  EXPECT_NE(b.out.find("O_DIRECT"), std::string::npos);
  EXPECT_NE(b.out.find("--target-samples"), std::string::npos);
  EXPECT_EQ(run("bench").rc, 2);
}

TEST(IoCli, PackErrors) {
  fs::path d = scratch() / "pack_errors";
  fs::remove_all(d);
  fs::create_directories(d / "src" / "sub");
  std::ofstream(d / "src" / "a.txt") << "a";
  expectOneLineError(run("pack " + (d / "src").string() + " " + (d / "out").string() + " --shard-size lots"), 2,
                     "--shard-size");
  expectOneLineError(run("pack " + (d / "nope").string() + " " + (d / "out").string()), 3, (d / "nope").string());
  expectOneLineError(run("pack " + (d / "src").string() + " " + (d / "src" / "sub" / "out").string()), 3,
                     "inside the source folder");
  expectOneLineError(run("pack " + (d / "src" / "sub").string() + " " + (d / "out2").string()), 3, "no files to pack");
  EXPECT_FALSE(fs::exists(d / "out2")) << "a failed pack leaves no (empty) output folder";
  EXPECT_EQ(run("pack " + (d / "src").string()).rc, 2);
  auto ok = run("pack " + (d / "src").string() + " " + (d / "out").string());
  EXPECT_EQ(ok.rc, 0) << ok.err;
  EXPECT_NE(ok.out.find("packed 1 samples (1 files"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find(" into 1 shard ("), std::string::npos)
      << ok.out;  // not "1 shards"; sizes in MiB as --shard-size
  EXPECT_NE(ok.out.find(" MiB)"), std::string::npos) << ok.out;
  EXPECT_TRUE(ok.err.empty()) << "no progress when stderr is not a terminal: " << ok.err;
  auto again = run("pack --progress " + (d / "src").string() + " " + (d / "out").string());
  EXPECT_NE(again.out.find("0 written, 1 kept"), std::string::npos) << again.out;
  EXPECT_NE(again.err.find("[pack] 1/1 shards"), std::string::npos) << again.err;
  // Other settings into the same folder: refused unless --replace (was: earlier shards deleted unasked).
  auto other = run("pack " + (d / "src").string() + " " + (d / "out").string() + " --shard-size 4K");
  EXPECT_EQ(other.rc, 3) << other.err;
  EXPECT_NE(other.err.find("holds a pack made with other settings (shard size 268435456 B, now 4096 B)"),
            std::string::npos)
      << other.err;
  EXPECT_EQ(run("pack --replace " + (d / "src").string() + " " + (d / "out").string() + " --shard-size 4K").rc, 0);
  // A dangling link stops the pack, naming it; --skip-bad leaves it out and lists it.
  fs::create_symlink(d / "src" / "gone.txt", d / "src" / "b.txt");
  expectOneLineError(run("pack " + (d / "src").string() + " " + (d / "out3").string()), 3, "a dangling link");
  auto skip = run("pack --skip-bad -q " + (d / "src").string() + " " + (d / "out3").string());
  EXPECT_EQ(skip.rc, 0) << skip.err;
  EXPECT_NE(skip.err.find("left out 1 file that cannot be packed"), std::string::npos) << skip.err;
  EXPECT_NE(skip.err.find("b.txt: a dangling link"), std::string::npos) << skip.err;
  fs::remove_all(d);
}

TEST(IoCli, BenchIoSmallRunGivesJsonAndAdvice) {
  fs::path d = scratch() / "bench";
  fs::create_directories(d);
  auto r = run("bench io " + d.string() +
               " --large-size 4M --files 40 --file-size 4K --shard-size 64K --threads 1,2 --seconds 0.02 --json - "
               "--target-samples 1000 --progress");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["setup"]["small_files"], 40);
  EXPECT_GT(j["figures"].size(), 20u);
  bool shards = false, small = false;
  for (const auto& f : j["figures"]) {
    shards |= f["pattern"] == "shards" && f["ops"] == 40;
    small |= f["pattern"] == "small files" && f["bytes"] == 40 * 4096;
  }
  EXPECT_TRUE(shards);
  EXPECT_TRUE(small);
  EXPECT_FALSE(j["cold_cache"]["method"].get<std::string>().empty());
  EXPECT_GT(j["advice"]["paths"].size(), 1u);
  EXPECT_NE(r.err.find("[bench io"), std::string::npos);
  // The scratch files are gone.
  EXPECT_TRUE(fs::is_empty(d));
  fs::remove_all(d);
}

// Issue 20: a size the disk cannot hold is one line before anything is written (was: write until full).
TEST(IoCli, BenchIoChecksFreeSpaceFirst) {
  auto dir = scratch() / "io_space";
  std::filesystem::create_directories(dir);
  auto r = run("bench io " + dir.string() + " --large-size 9999T");
  EXPECT_EQ(r.rc, 3) << r.out;
  EXPECT_NE(r.err.find("GB of scratch space"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

TEST(IoCli, BenchIoInterruptedRemovesItsScratchFiles) {
  fs::path d = scratch() / "interrupted";
  fs::remove_all(d);
  fs::create_directories(d);
  fs::path err = scratch() / "interrupted.err", rc = scratch() / "interrupted.rc";
  std::string cmd = "sh -c '" + std::string(GPUDOCTOR_BIN) + " bench io " + d.string() + " --files 400000 -q 2>" +
                    err.string() + " & p=$!; sleep 1; kill -INT $p; wait $p; echo $? >" + rc.string() + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream rf(rc), ef(err);
  int code = -1;
  rf >> code;
  std::string e((std::istreambuf_iterator<char>(ef)), {});
  EXPECT_EQ(code, 130) << e;  // 128 + SIGINT (exit_codes.h)
  EXPECT_EQ(e, "gpudoctor: error: interrupted; scratch files removed\n");
  EXPECT_TRUE(fs::is_empty(d));
  fs::remove_all(d);
}

TEST(IoCli, BenchIoTargetFromATrace) {
  fs::path d = scratch() / "trace_target";
  fs::create_directories(d);
  auto r = run("bench io " + d.string() +
               " -q --files 20 --large-size 4M --seconds 0.01 --threads 1 --no-cold --json - "
               "--batch-size 32 --from-trace " +
               std::string(GPUDOCTOR_SOURCE_DIR) + "/examples/ddp_bf16_flash");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  // 2 ranks x 32 samples per step over the step time without loader stalls.
  EXPECT_GT(j["advice"]["target"]["samples_per_s"].get<double>(), 100);
  EXPECT_EQ(j["advice"]["paths"][0]["name"], "small files, warm cache (today)");
  fs::remove_all(d);
}

TEST(IoCli, BenchIoErrors) {
  fs::path d = scratch();
  expectOneLineError(run("bench io " + (d / "missing").string() + " -q"), 3,
                     (d / "missing").string() + ": not a directory");
  expectOneLineError(run("bench io " + d.string() + " --large-size 1K"), 2, "--large-size");
  expectOneLineError(run("bench io " + d.string() + " --target-samples 10 --target-bytes 1M"), 2, "not both");
  expectOneLineError(run("bench io " + d.string() + " --from-trace x.json"), 2, "--batch-size");
  expectOneLineError(run("bench io " + d.string() + " --cache lukewarm"), 2, "--cache");
  EXPECT_EQ(run("bench io " + d.string() + " --threads 0").rc, 2);
}

}  // namespace
