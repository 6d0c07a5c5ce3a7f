// Every verb's failure paths against the one exit-code table (cli/exit_codes.h): a usage error
// exits 2, bad input or I/O 3, a failed gate 1, no GPU or driver 4, success 0, each failure with
// one `gpudoctor: error:` line. Also issue 42's flags that were ignored or conflicted silently.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli/cli_test_util.h"
#include "cli/exit_codes.h"

namespace exit_codes_cli_test {
namespace fs = std::filesystem;
using namespace gpudoctor::testing;  // NOLINT: the shared CLI test helpers
using namespace gpudoctor::cli;      // NOLINT: the exit codes

const std::string kExample = src("examples/ddp_bf16_flash/bf16_flash_rank0.pt.trace.json.gz");
const std::string kTopo = src("testdata/topology/dgx1_v100.toml");
std::string whatif(const std::string& n) { return src("testdata/whatif/" + n + ".pt.trace.json.gz"); }

// The failure is one error line with `needle` and the exit code `rc`.
void expectErrorAt(const Run& r, int rc, const std::string& needle = "") {
  EXPECT_EQ(r.rc, rc) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("gpudoctor: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
}

// (a macro, so that a failure names the caller's line)
#define expectError(...)        \
  do {                          \
    SCOPED_TRACE("the call");   \
    expectErrorAt(__VA_ARGS__); \
  } while (0)

// `gpudoctor ARGS` with stdout on /dev/full (every write fails with ENOSPC).
Run runToFullDisk(const std::string& args) {
  auto d = scratch();
  std::string cmd = std::string(testBin()) + " " + args + " >/dev/full 2>" + (d / "err").string();
  int st = std::system(cmd.c_str());
  return {WIFEXITED(st) ? WEXITSTATUS(st) : 128, "", slurp(d / "err")};
}

bool cudaBuild() {
#ifdef GPUDOCTOR_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

TEST(ExitCodes, TopLevel) {
  expectError(run("frob"), kUsage, "unknown verb");
  EXPECT_EQ(run("").rc, kUsage);
  EXPECT_EQ(run("--version").rc, kOk);
  // Help and the version written to a full disk fail like any other output.
  for (const char* a : {"--help", "analyze --help", "nccl env --help", "--version"})
    expectError(runToFullDisk(a), kBadInput, "stdout");
}

TEST(ExitCodes, Analyze) {
  expectError(run("analyze --bogus"), kUsage);
  expectError(run("analyze --rank -1 " + kExample), kUsage, "--rank");
  expectError(run("analyze --findings -5 " + kExample), kUsage, "--findings");
  expectError(run("analyze --json - --html - " + kExample), kUsage, "stdout");
  expectError(run("analyze --json - --summary-out - " + kExample), kUsage, "stdout");
  expectError(run("analyze /nonexistent/trace.json"), kBadInput, "/nonexistent/trace.json");
  expectError(run("analyze " + src("testdata/bad/truncated.json.gz")), kBadInput);
  expectError(run("analyze --thresholds /nonexistent.toml " + kExample), kBadInput, "/nonexistent.toml");
  expectError(run("analyze --json /nonexistent/dir/a.json " + kExample), kBadInput, "/nonexistent/dir/a.json");
  expectError(runToFullDisk("analyze --no-what-if --json - " + kExample), kBadInput, "stdout");
  expectError(runToFullDisk("analyze --no-what-if " + kExample), kBadInput, "stdout");
  auto ok = run("analyze -q --no-what-if " + kExample);
  EXPECT_EQ(ok.rc, kOk) << ok.err;
}

// CLI11's own range check printed DBL_MAX in 300 digits ("Value 0 not in range 0.000000 to 1797693...").
TEST(ExitCodes, RangeMessagesArePlain) {
  for (const char* c : {"analyze --flops-per-step 0", "plan --layers 0", "plan --tflops -1",
                        "bench io /tmp --target-samples 0", "pack a b --shuffle -1"}) {
    SCOPED_TRACE(c);
    auto r = run(c);
    expectError(r, kUsage);
    EXPECT_EQ(r.err.find("179769"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("not in range"), std::string::npos) << r.err;
  }
}

TEST(ExitCodes, SummaryOutDashIsStdout) {
  fs::path d = scratch() / "summary_dash";
  fs::create_directories(d);
  std::string cmd = "cd " + d.string() + " && " + testBin() + " analyze -q --no-what-if --summary-out - " + kExample +
                    " > out.txt 2> err.txt";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(d / "err.txt");
  EXPECT_FALSE(fs::exists(d / "-")) << "a file named '-'";
  EXPECT_EQ(slurp(d / "out.txt").rfind("{\"format\":\"gpudoctor-summary\"", 0), 0u)
      << slurp(d / "out.txt").substr(0, 200);
}

// A directory of per-rank traces that also holds other JSON (a config): those files are skipped and
// named, the traces analyzed.
TEST(ExitCodes, AnalyzeSkipsForeignFilesOfADirectory) {
  auto dir = scratch() / "ranks";
  fs::create_directories(dir);
  fs::copy_file(kExample, dir / "rank0.pt.trace.json.gz");
  { std::ofstream(dir / "config.json") << R"({"lr": 0.001})"; }
  auto r = run("analyze " + dir.string() + " --no-what-if");
  EXPECT_EQ(r.rc, kOk) << r.err;
  EXPECT_NE(r.err.find("config.json: skipped, not a trace"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("1 rank"), std::string::npos) << r.out;
  fs::remove(dir / "rank0.pt.trace.json.gz");  // nothing left but the config: no trace at all
  expectError(run("analyze " + dir.string()), kBadInput, "no trace files");
}

TEST(ExitCodes, Checklist) {
  std::string failing = whatif("gpt_launch_bound__base");
  expectError(run("checklist --strict --bogus"), kUsage);
  expectError(run("checklist --strict /nonexistent"), kBadInput, "/nonexistent");
  auto gate = run("checklist --strict " + failing);
  EXPECT_EQ(gate.rc, kGateFailed) << gate.err;
  EXPECT_EQ(run("checklist " + failing).rc, kOk);
}

TEST(ExitCodes, Compare) {
  std::string fast = whatif("gpt_launch_bound__cuda_graphs"), slow = whatif("gpt_launch_bound__base");
  expectError(run("compare " + fast), kUsage);
  expectError(run("compare " + fast + " " + slow + " --fail-if-slower -1"), kUsage, "--fail-if-slower");
  expectError(run("compare " + fast + " " + slow + " --json - --html -"), kUsage, "stdout");
  expectError(run("compare /nonexistent/a.json " + slow), kBadInput, "/nonexistent/a.json");
  expectError(run("compare " + fast + " " + slow + " --fail-if-slower 3 --json /nonexistent/dir/c.json"), kBadInput,
              "/nonexistent/dir/c.json");
  EXPECT_EQ(run("compare " + fast + " " + slow + " --fail-if-slower 3 -q").rc, kGateFailed);
  EXPECT_EQ(run("compare " + fast + " " + fast + " --fail-if-slower 3").rc, kOk);
}

TEST(ExitCodes, NcclEnvAndLog) {
  std::string file = " --no-host --nccl-version 2.28.3 --from ";
  expectError(run("nccl frob"), kUsage, "unknown nccl verb \"frob\"");
  auto none = run("nccl");
  expectError(none, kUsage, "env, log");
  expectError(run("nccl env --no-host --this-host"), kUsage, "contradict");
  auto version = run("nccl env --nccl-version 9.99.0");
  expectError(version, kUsage, "9.99.0");
  EXPECT_EQ(version.err.find("cannot read"), std::string::npos) << version.err;
  EXPECT_NE(version.err.find("2."), std::string::npos) << version.err;
  expectError(run("nccl env" + file + "/nonexistent/env.sh"), kBadInput, "/nonexistent/env.sh");
  auto strict = run("nccl env --strict --this-host --nccl-version 2.28.3 --sysfs-root " +
                    src("testdata/sysroot/ib_node") + " --from " + src("testdata/nccl_env/mixed.sh"));
  EXPECT_EQ(strict.rc, kGateFailed) << strict.err;
  EXPECT_EQ(run("nccl env" + file + src("testdata/nccl_env/pod.yaml")).rc, kOk);
  expectError(run("nccl log"), kUsage);
  expectError(run("nccl log /nonexistent.log"), kBadInput, "/nonexistent.log");
  EXPECT_EQ(run("nccl log " + src("testdata/nccl_logs/ddp_2xh200_info.log")).rc, kOk);
  expectError(run("nccl log " + src("README.md")), kBadInput, "no NCCL lines");  // prose naming NCCL
  if (!cudaBuild()) expectError(run("nccl bench -b 8 -e 8"), kNoDevice, "CUDA");
}

TEST(ExitCodes, Plan) {
  expectError(run("plan --layers 0"), kUsage, "--layers");
  expectError(run("plan --model nosuch"), kUsage, "nosuch");
  expectError(run("plan --config /nonexistent.toml"), kBadInput, "/nonexistent.toml");
  expectError(run("plan --model gpt2 --gpus-per-node 2 --global-batch 16 --from-trace /nonexistent"), kBadInput,
              "/nonexistent");
  EXPECT_EQ(run("plan --model llama2-70b --gpu l40s --gpus-per-node 1 --global-batch 8").rc, kGateFailed);
  EXPECT_EQ(run("plan --model gpt2 --gpus-per-node 2 --global-batch 16").rc, kOk);
}

TEST(ExitCodes, TopoAndPlace) {
  expectError(run("topo --repeats 0"), kUsage, "--repeats");
  expectError(run("topo --measure --topology " + kTopo), kUsage, "--measure");
  expectError(run("topo --topology /nonexistent.toml"), kBadInput, "/nonexistent.toml");
  auto nodrv = run("topo --nvml-library /nonexistent/libnvidia-ml.so.1");
  expectError(nodrv, kNoDevice, "cannot load NVML");
  EXPECT_NE(nodrv.err.find("--topology FILE"), std::string::npos) << nodrv.err;
  EXPECT_EQ(run("topo --topology " + kTopo).rc, kOk);
  expectError(run("place --gpus 2 --nodes 2 --gpus-per-node 1 --topology " + kTopo), kUsage, "--gpus");
  expectError(run("place --gpus-per-node 2 --topology " + kTopo), kUsage, "--gpus-per-node");
  expectError(run("place --gpus 1 --topology /nonexistent.toml"), kBadInput, "/nonexistent.toml");
  expectError(run("place --gpus 9 --topology " + kTopo), kGateFailed, "only 8");
  expectError(run("place --gpus 1 --nvml-library /nonexistent/libnvidia-ml.so.1"), kNoDevice, "cannot load NVML");
  EXPECT_EQ(run("place --gpus 2 --topology " + kTopo).rc, kOk);
}

TEST(ExitCodes, Pack) {
  fs::path d = scratch() / "exit_pack";
  fs::remove_all(d);
  fs::create_directories(d / "src");
  std::ofstream(d / "src" / "a.txt") << "a";
  expectError(run("pack " + (d / "src").string()), kUsage);
  expectError(run("pack " + (d / "nope").string() + " " + (d / "out").string()), kBadInput, (d / "nope").string());
  EXPECT_EQ(run("pack -q " + (d / "src").string() + " " + (d / "out").string()).rc, kOk);
}

TEST(ExitCodes, Bench) {
  fs::path d = scratch() / "exit_bench";
  fs::create_directories(d);
  expectError(run("bench frob"), kUsage, "unknown bench verb");
  expectError(run("bench io " + d.string() + " --files 5"), kUsage, "--files");
  expectError(run("bench io " + (d / "missing").string() + " -q"), kBadInput, "not a directory");
  EXPECT_EQ(run("bench io " + d.string() + " -q --files 20 --large-size 4M --seconds 0.01 --threads 1 --no-cold").rc,
            kOk);
  expectError(run("bench gpu --only frob"), kUsage, "frob");
  expectError(run("bench gpu --datasheet H200 --ceilings-out /nonexistent/dir/c.json"), kBadInput, "/nonexistent/dir");
  auto sheet = run("bench gpu --datasheet H200 --ceilings-out -");
  EXPECT_EQ(sheet.rc, kOk) << sheet.err;
  EXPECT_NE(sheet.out.find("gpudoctor-ceilings"), std::string::npos) << sheet.out.substr(0, 200);
  if (!cudaBuild()) expectError(run("bench gpu --quick"), kNoDevice, "CUDA");
}

TEST(ExitCodes, Monitor) {
  expectError(run("monitor -q --duration 2 --no-gpu"), kUsage, "nothing");
  expectError(run("monitor --interval 0"), kUsage, "--interval");
  expectError(run("monitor --record - --no-gpu --once"), kUsage, "--record");
  expectError(run("monitor frob"), kUsage, "unknown monitor verb");
  expectError(run("monitor report /nonexistent.jsonl"), kBadInput, "/nonexistent.jsonl");
  expectError(run("monitor --no-gpu --once --interval 0.05 --root /nonexistent"), kBadInput, "/nonexistent");
  // Without a driver the monitor runs on the host's counters and says so; it suggested --topology,
  // a flag monitor does not have.
  auto host = run("monitor --once --interval 0.05 --json - --nvml-library /nonexistent/libnvidia-ml.so.1");
  EXPECT_EQ(host.rc, kOk) << host.err;
  EXPECT_NE(host.err.find("host-only"), std::string::npos) << host.err;
  EXPECT_EQ(host.err.find("--topology"), std::string::npos) << host.err;
  expectError(runToFullDisk("monitor --no-gpu --once --interval 0.05"), kBadInput, "stdout");
}

TEST(ExitCodes, Record) {
  auto typo = run("record --nvtx-steps '^x$' -- true");
  expectError(typo, kUsage, "--nvtx-steps");
  EXPECT_NE(typo.err.find("did you mean --nvtx-step"), std::string::npos) << typo.err;
  expectError(run("record --nvtx-steps '^x$' python train.py"), kUsage, "--nvtx-steps");
  expectError(run("record -o x python -- train.py"), kUsage, "python");
  expectError(run("record --lib /nonexistent/libgpudoctor-record.so -- true"), kBadInput, "no such file");
  if (void* h = dlopen("libcuda.so.1", RTLD_LAZY)) {
    dlclose(h);
    return;  // (the GPU test record_gpu covers a machine with a driver)
  }
  expectError(run("record -o " + (scratch() / "rec_exit").string() + " -- true"), kNoDevice);
}

// Every verb's --help ends with the table.
TEST(ExitCodes, EveryHelpHasTheTable) {
  for (const char* v : {"analyze", "checklist", "compare", "nccl env", "nccl log", "nccl bench", "plan", "topo",
                        "place", "pack", "bench io", "bench gpu", "monitor", "monitor report", "record"}) {
    SCOPED_TRACE(v);
    auto r = run(std::string(v) + " --help");
    EXPECT_EQ(r.rc, kOk);
    EXPECT_NE(r.out.find("Exit status: 0 ok; 1 a gate"), std::string::npos) << r.out;
  }
}

// A trace from a pipe was "not a trace format": it was read twice (its head, then the whole) and the
// second read started where the first stopped. `-`, /dev/stdin and a pipe are read once into a
// temporary file; a stream that is no trace still gets the precise error.
TEST(ExitCodes, ATraceFromAPipeOrStdin) {
  const std::string gz = src("examples/ddp_bf16_flash/bf16_flash_rank0.pt.trace.json.gz");
  auto dash = run("analyze - <" + gz);
  EXPECT_EQ(dash.rc, kOk) << dash.err;
  EXPECT_NE(dash.out.find("1 rank, 2 steps"), std::string::npos) << dash.out;
  auto pipe = run("analyze /dev/stdin --json -", "gzip -dc " + gz + " |");
  EXPECT_EQ(pipe.rc, kOk) << pipe.err;
  EXPECT_NE(pipe.out.find("\"tool\""), std::string::npos);
  auto compare = run("compare - " + gz, "cat " + gz + " |");
  EXPECT_EQ(compare.rc, kOk) << compare.err;
  expectError(run("analyze -", "echo hello |"), kBadInput, "stdin: not a trace format");
  expectError(run("analyze - </dev/null"), kBadInput, "stdin: empty file");
}

// A copy of the binary found the bundled example only through the source tree it was built from
// (issue 42): the binary carries it, and writes it to the user's cache when no installed copy is
// beside it.
TEST(ExitCodes, ACopiedBinaryHasTheBundledExample) {
  auto dir = scratch() / "copied";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(testBin(), dir / "gpudoctor", std::filesystem::copy_options::overwrite_existing);
  auto cache = scratch() / "cache";
  std::string cmd = "XDG_CACHE_HOME=" + cache.string() + " " + (dir / "gpudoctor").string() +
                    " analyze --no-what-if >" + (dir / "out").string() + " 2>" + (dir / "err").string();
  int st = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == kOk) << slurp(dir / "err");
  EXPECT_NE(slurp(dir / "err").find("the bundled example " + (cache / "gpudoctor/examples/ddp_bf16_flash").string()),
            std::string::npos)
      << slurp(dir / "err");
  EXPECT_NE(slurp(dir / "out").find("2 ranks"), std::string::npos) << slurp(dir / "out");
  EXPECT_EQ(std::filesystem::file_size(cache / "gpudoctor/examples/ddp_bf16_flash/bf16_flash_rank0.pt.trace.json.gz"),
            std::filesystem::file_size(src("examples/ddp_bf16_flash/bf16_flash_rank0.pt.trace.json.gz")));
}

// The binary needed the Open MPI runtime (libmpi, libopen-rte, libopen-pal, hwloc, libevent) even
// without --mpi (issue 42): MPI is in libgpudoctor-mpi.so, loaded for --mpi only. A copy without the
// library beside it runs, and --mpi says in one line what is missing.
TEST(ExitCodes, MpiIsLoadedOnlyForMpi) {
  auto ldd = scratch() / "ldd.txt";
  ASSERT_EQ(std::system(("ldd " + testBin() + " >" + ldd.string()).c_str()), 0);
  EXPECT_EQ(slurp(ldd).find("libmpi"), std::string::npos) << slurp(ldd);
  EXPECT_EQ(slurp(ldd).find("libopen-"), std::string::npos) << slurp(ldd);
  if (run("analyze --help").out.find("--mpi") == std::string::npos) return;  // a build without MPI
  auto dir = scratch() / "nompi";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(testBin(), dir / "gpudoctor", std::filesystem::copy_options::overwrite_existing);
  std::string cmd = (dir / "gpudoctor").string() + " analyze --mpi " + src("examples/ddp_bf16_flash") + " 2>" +
                    (dir / "err").string();
  int st = std::system(cmd.c_str());
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == kBadInput) << slurp(dir / "err");
  EXPECT_NE(slurp(dir / "err").find("libgpudoctor-mpi.so"), std::string::npos) << slurp(dir / "err");
  EXPECT_EQ(lines(slurp(dir / "err")), 1) << slurp(dir / "err");
}

}  // namespace exit_codes_cli_test
