// The binary as a user runs it: exit codes, one-line errors naming the file, JSON output that
// parses and is never left half-written.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include "cli/cli_test_util.h"

#include <fmt/format.h>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace {

namespace fs = std::filesystem;

using namespace gpudoctor::testing;  // NOLINT: the shared CLI test helpers

TEST(Cli, BundledExampleWithoutArguments) {
  auto r = run("analyze");
  EXPECT_NE(r.out.find("Findings by severity; in each, replay-predicted speedups first"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("un-profiled step (replay): "), std::string::npos) << r.out;
  // The critical findings first; the headline (info here) names the findings that address it instead
  // of repeating them.
  EXPECT_NE(r.out.find(" 1. [critical] "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(". [info] Primary bottleneck: host-bound, GPU idle"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Addressed by:"), std::string::npos) << r.out;
  std::string flat;  // the wrapped lines joined
  for (char c : r.out)
    if (c != '\n' && !(c == ' ' && !flat.empty() && flat.back() == ' '))
      flat += c;
    else if (c == '\n' && !flat.empty() && flat.back() != ' ')
      flat += ' ';
  EXPECT_NE(flat.find("The replay finds that fixing it buys most: cuda_graphs"), std::string::npos) << flat;
  EXPECT_NE(r.out.find("Plan (predicted by replay"), std::string::npos) << r.out;
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("2 ranks, 2 steps"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Kernel classes"), std::string::npos);
  EXPECT_NE(r.out.find("rank 0 arrives last"), std::string::npos);
  // Readable at 100 columns.
  size_t start = 0;
  while (start < r.out.size()) {
    size_t end = r.out.find('\n', start);
    if (end == std::string::npos) end = r.out.size();
    EXPECT_LE(end - start, 100u) << r.out.substr(start, end - start);
    start = end + 1;
  }
}

TEST(Cli, JsonHasEveryFigureAndDefinitions) {
  fs::path out = fs::temp_directory_path() / "gpudoctor_cli_test.json";
  fs::remove(out);
  auto r = run("analyze -q --json " + out.string() + " " + src("examples/ddp_bf16_flash"));
  ASSERT_EQ(r.rc, 0) << r.err;
  std::ifstream f(out);
  auto j = nlohmann::json::parse(f);
  EXPECT_EQ(j["ranks"].size(), 2u);
  EXPECT_FALSE(j["definitions"].empty());
  auto s = j["ranks"][0]["steps"][0];
  EXPECT_EQ(s["wall_ns"].get<int64_t>(), s["compute_ns"].get<int64_t>() + s["comm_exposed_ns"].get<int64_t>() +
                                             s["copy_exposed_ns"].get<int64_t>() + s["idle_ns"].get<int64_t>());
  EXPECT_EQ(j["straggler"]["rank"], 0);
  fs::remove(out);
}

TEST(Cli, BadInputsGiveOneLineNamingTheFile) {
  const std::array<std::string, 6> bad = {"testdata/bad/empty.json",       "testdata/bad/garbage.bin",
                                          "testdata/bad/not_a_trace.json", "testdata/bad/truncated.json.gz",
                                          "testdata/bad/cpu_only.json.gz", "testdata/no_such_file.json"};
  for (const auto& b : bad) {
    auto r = run("analyze " + src(b));
    EXPECT_EQ(r.rc, 3) << b;
    EXPECT_EQ(lines(r.err), 1) << b << ": " << r.err;
    EXPECT_NE(r.err.find(src(b)), std::string::npos) << r.err;
    EXPECT_EQ(r.err.rfind("gpudoctor: error: ", 0), 0u) << r.err;
    EXPECT_TRUE(r.out.empty()) << b;
  }
}

TEST(Cli, FuzzRegressionsDoNotCrash) {
  // Inputs libFuzzer once broke the tool with; each must give a report or a clean error.
  for (const auto& e : fs::directory_iterator(src("testdata/fuzz_regressions"))) {
    auto r = run("analyze -q " + e.path().string());
    EXPECT_TRUE(r.rc == 0 || (r.rc == 3 && lines(r.err) == 1)) << e.path() << " rc=" << r.rc << " " << r.err;
  }
}

TEST(Cli, ChecklistVerbAndThresholdsFile) {
  auto r = run("checklist -q " + src("testdata/kineto/fp32_naive_rank0.pt.trace.json.gz"));
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("DataLoader workers (num_workers > 0)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fail"), std::string::npos);
  fs::path bad = fs::temp_directory_path() / "gpudoctor_bad_thresholds.toml";
  std::ofstream(bad) << "comm_share_max = 0.2\ngpu_utilisation_min = 0.9\n";
  auto b = run("analyze -q --thresholds " + bad.string());
  EXPECT_EQ(b.rc, 3);  // the file is bad input
  EXPECT_EQ(lines(b.err), 1) << b.err;
  EXPECT_NE(b.err.find("unknown threshold \"gpu_utilisation_min\""), std::string::npos) << b.err;
  EXPECT_NE(b.err.find(":2"), std::string::npos) << b.err;
  fs::remove(bad);
}

TEST(Cli, HtmlReportIsSelfContained) {
  fs::path out = fs::temp_directory_path() / "gpudoctor_cli_test.html";
  auto r = run("analyze -q --html " + out.string());
  ASSERT_EQ(r.rc, 0) << r.err;
  std::ifstream f(out);
  std::string html((std::istreambuf_iterator<char>(f)), {});
  for (auto id : {"chart-ranks", "chart-timeline", "chart-classes", "chart-collectives", "id=findings", "id=checklist"})
    EXPECT_NE(html.find(id), std::string::npos) << id;
  // Offline: nothing is fetched from elsewhere.
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find(" src="), std::string::npos);
  fs::remove(out);
}

// What the HTML report was missing (issue 20): a per-rank table, the straggler in words, the step
// time of every step, a timeline chosen by rank and step (not rank 0's first step only), axes with
// ticks, and inline SVG that an HTML parser reads as written (no "class=x/>" that leaves an
// element open and hides every chart after it).
TEST(Cli, HtmlReportHasRanksStepsAndAChoiceOfTimelines) {
  fs::path out = fs::temp_directory_path() / ("gpudoctor_cli_test_" + std::to_string(::getpid()) + ".html");
  auto r = run("analyze -q --html " + out.string() + " " + src("examples/ddp_bf16_flash"));
  ASSERT_EQ(r.rc, 0) << r.err;
  std::ifstream f(out);
  std::string html((std::istreambuf_iterator<char>(f)), {});
  fs::remove(out);
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = html.find(what); at != std::string::npos; at = html.find(what, at + 1)) ++n;
    return n;
  };
  // The table: a header row and one row per rank.
  size_t table = html.find("<table id=ranks>");
  ASSERT_NE(table, std::string::npos);
  std::string ranks = html.substr(table, html.find("</table>", table) - table);
  size_t rows = 0;
  for (size_t at = ranks.find("<tr>"); at != std::string::npos; at = ranks.find("<tr>", at + 1)) ++rows;
  EXPECT_EQ(rows, 3u) << ranks;
  EXPECT_NE(html.find("<p id=straggler>Rank 0 arrives last"), std::string::npos);
  EXPECT_NE(html.find("id='chart-trend'"), std::string::npos);
  // Each rank's median and slowest step; the first shown, the others hidden.
  EXPECT_EQ(count("<option value='tl-"), 4u);
  EXPECT_EQ(count("class='chart tl'"), 4u);
  EXPECT_EQ(count("class='chart tl' viewBox='0 0 900 140' width=900 height=140 role=img style='display:none'"), 3u);
  EXPECT_GE(count("class=tick"), 20u);  // axes with ticks, not "0" and an end label
  EXPECT_EQ(count("class=grid/>"), 0u);
  EXPECT_EQ(html.find("size unknown"), std::string::npos);
}

// A pod's or job's settings file describes the job's machines, not the one gpudoctor runs on (issue
// 20: on a login node without HCAs, a correct NCCL_IB_HCA was called wrong): the host checks run on
// --from files only with --this-host. And analyze --nccl-env counts what nccl env counts.
TEST(Cli, NcclEnvFromFileIsNotJudgedAgainstThisHost) {
  const std::string root = " --sysfs-root " + src("testdata/sysroot/plain_node");
  auto pod = run("nccl env --nccl-version 2.28.3 --from " + src("testdata/nccl_env/pod.yaml") + root);
  ASSERT_EQ(pod.rc, 0) << pod.err;
  EXPECT_NE(pod.out.find("host checks skipped: the settings come from a file"), std::string::npos) << pod.out;
  EXPECT_EQ(pod.out.find("wrong "), std::string::npos) << pod.out;
  EXPECT_NE(pod.out.find("0 wrong"), std::string::npos) << pod.out;
  auto here = run("nccl env --this-host --nccl-version 2.28.3 --from " + src("testdata/nccl_env/pod.yaml") + root);
  ASSERT_EQ(here.rc, 0) << here.err;
  EXPECT_NE(here.out.find("no HCA \"mlx5_0\" on this host"), std::string::npos) << here.out;
  auto both = run("nccl env --this-host --no-host --from " + src("testdata/nccl_env/pod.yaml"));
  EXPECT_EQ(both.rc, 2);
  EXPECT_NE(both.err.find("contradict"), std::string::npos) << both.err;
  // The same file through analyze: the same counts per verdict, at the traces' NCCL version.
  auto env = run("nccl env --json - --nccl-version 2.28.9 --from " + src("testdata/nccl_env/mixed.sh") + root);
  ASSERT_EQ(env.rc, 0) << env.err;
  std::map<std::string, int> counts;
  const auto doc = nlohmann::json::parse(env.out);
  for (const auto& f : doc["findings"]) ++counts[f["verdict"].get<std::string>()];
  auto an = run("analyze " + src("examples/ddp_bf16_flash") + " --nccl-env " + src("testdata/nccl_env/mixed.sh"));
  ASSERT_EQ(an.rc, 0) << an.err;
  EXPECT_NE(an.out.find(fmt::format("NCCL settings: {} ignored by NCCL, {} wrong, {} slow", counts["ignored"],
                                    counts["wrong"], counts["slow"])),
            std::string::npos)
      << counts["ignored"] << "/" << counts["wrong"] << "/" << counts["slow"] << "\n"
      << env.out;
}

TEST(Cli, NcclEnv) {
  std::string base = "nccl env --no-host --nccl-version 2.28.3 --from ";
  auto ok = run(base + src("testdata/nccl_env/pod.yaml"));
  EXPECT_EQ(ok.rc, 0) << ok.err;
  EXPECT_NE(ok.out.find("3 settings from"), std::string::npos) << ok.out;
  auto strict = run("nccl env --strict --this-host --nccl-version 2.28.3 --sysfs-root " +
                    src("testdata/sysroot/ib_node") + " --from " + src("testdata/nccl_env/mixed.sh"));
  EXPECT_EQ(strict.rc, 1);  // a failed gate (exit_codes.h)
  auto json = run(base + src("testdata/nccl_env/mixed.sh") + " --json -");
  ASSERT_EQ(json.rc, 0);
  auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["nccl_version"], "2.28.3");
  EXPECT_GE(j["findings"].size(), 19u);
  auto bad = run(base + src("testdata/nccl_env/malformed.sh"));
  EXPECT_EQ(bad.rc, 3);
  EXPECT_EQ(lines(bad.err), 1) << bad.err;
  EXPECT_NE(bad.err.find("malformed.sh:2"), std::string::npos) << bad.err;
  auto missing = run(base + "/nonexistent/env.sh");
  EXPECT_EQ(missing.rc, 3);
  EXPECT_NE(missing.err.find("/nonexistent/env.sh"), std::string::npos);
  auto version = run("nccl env --nccl-version banana");
  EXPECT_EQ(version.rc, 2);
  EXPECT_NE(version.err.find("banana"), std::string::npos) << version.err;
  auto garbage = run(base + src("testdata/bad/garbage.bin"));
  EXPECT_EQ(garbage.rc, 3);
}

// Issue 20: checklist gates CI with --strict (exit 1 on a failed item) and names its own document.
TEST(Cli, ChecklistStrictAndItsJson) {
  auto r = run("checklist " + src("testdata/whatif/gpt_launch_bound__base.pt.trace.json.gz"));
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find(" fail "), std::string::npos) << r.out;
  r = run("checklist --strict " + src("testdata/whatif/gpt_launch_bound__base.pt.trace.json.gz"));
  EXPECT_EQ(r.rc, 1);
  r = run("checklist --json - " + src("testdata/whatif/gpt_launch_bound__base.pt.trace.json.gz"));
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("\"tool\": \"gpudoctor checklist\""), std::string::npos) << r.out.substr(0, 200);
}

// Issue 20: an unknown verb is named with the verbs there are; a bad flag points to its verb's help.
TEST(Cli, UnknownVerbAndTheVerbsHelp) {
  auto r = run("bogus");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("unknown verb \"bogus\" (verbs: analyze, checklist, compare,"), std::string::npos) << r.err;
  r = run("nccl env --bogus");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("(see gpudoctor nccl env --help)"), std::string::npos) << r.err;
  r = run("analyze --top -1");
  EXPECT_NE(r.err.find("(see gpudoctor analyze --help)"), std::string::npos) << r.err;
}

// Issue 20: a negative, zero or absurd number is one error line naming the flag and exit 2, never
// a plan made with the default instead ("--efficiency 7" printed "700 % of peak").
TEST(Cli, PlanRejectsBadNumbers) {
  for (const char* bad :
       {"--global-batch -5", "--global-batch 0", "--micro-batch -4", "--tp -2", "--pp 0", "--efficiency -1",
        "--efficiency 7", "--gpu-memory-gb -3", "--tflops 0", "--seq -1", "--top 0"}) {
    auto r = run(std::string("plan --model gpt2 ") + bad);
    EXPECT_EQ(r.rc, 2) << bad << ": " << r.out;
    std::string flag = std::string(bad).substr(0, std::string(bad).find(' '));
    EXPECT_NE(r.err.find(flag), std::string::npos) << bad << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  // The same through --config.
  auto cfg = scratch() / "bad_plan.toml";
  for (const char* line : {"global_batch = -5", "efficiency = 7.0", "gpu_memory_gb = -3.0"}) {
    std::ofstream(cfg) << line << "\n";
    auto r = run("plan --model gpt2 --config " + cfg.string());
    EXPECT_EQ(r.rc, 3) << line;  // the file is bad input
    EXPECT_NE(r.err.find("must be"), std::string::npos) << line << ": " << r.err;
  }
}

TEST(Cli, Plan) {
  auto ok = run("plan --model llama2-7b --gpu h100 --global-batch 256");
  EXPECT_EQ(ok.rc, 0) << ok.err;
  EXPECT_NE(ok.out.find("Megatron: --tensor-model-parallel-size"), std::string::npos) << ok.out;
  auto j = run("plan --model gpt2 --gpus-per-node 1 --global-batch 8 --json -");
  ASSERT_EQ(j.rc, 0) << j.err;
  auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["model"]["params"], 124439808);
  EXPECT_TRUE(doc["plans"][0]["fits"]);
  // Byte counts are integers (issue 20: they were floats), and the total is the parts' sum exactly.
  EXPECT_TRUE(doc["cluster"]["memory_bytes"].is_number_integer());
  for (const auto& p : doc["plans"]) {
    int64_t sum = 0;
    for (const auto& [k, v] : p["memory_bytes"].items()) {
      EXPECT_TRUE(v.is_number_integer()) << k << " = " << v;
      if (k != "total") sum += v.get<int64_t>();
    }
    EXPECT_EQ(p["memory_bytes"]["total"].get<int64_t>(), sum);
  }
  auto none = run("plan --model llama2-70b --gpu a100-40g --gpus-per-node 1 --global-batch 8");
  EXPECT_EQ(none.rc, 1);
  EXPECT_NE(none.out.find("Nothing fits. Closest:"), std::string::npos) << none.out;
  EXPECT_NE(none.out.find("It would fit with"), std::string::npos);
  auto preset = run("plan --model llama9-1t");
  EXPECT_EQ(preset.rc, 2);
  EXPECT_NE(preset.err.find("unknown model preset \"llama9-1t\""), std::string::npos) << preset.err;
  auto tp = run("plan --model llama2-7b --tp 3");
  EXPECT_EQ(tp.rc, 2);
  EXPECT_NE(tp.err.find("does not divide the 32 attention heads"), std::string::npos) << tp.err;
  auto vs =
      run("plan --model gpt2 --layers 4 --hidden 512 --heads 8 --vocab 8192 --seq 512 --gpus-per-node 2 "
          "--global-batch 16 --micro-batch 8 --zero 0 --recompute none --from-trace " +
          src("examples/ddp_bf16_flash"));
  EXPECT_EQ(vs.rc, 0) << vs.err;
  EXPECT_NE(vs.out.find("Kernel efficiency: the kernels ran at 18%"), std::string::npos) << vs.out;
  EXPECT_NE(vs.out.find("Host overhead"), std::string::npos) << vs.out;
  // A plan for another GPU count than the traced job's is refused (was: dp 1 against 2 ranks).
  auto one =
      run("plan --model gpt2 --gpus-per-node 1 --global-batch 8 --micro-batch 8 --zero 0 --recompute none "
          "--from-trace " +
          src("examples/ddp_bf16_flash"));
  EXPECT_EQ(one.rc, 2);
  EXPECT_NE(one.err.find("the traces are of a 2-GPU job, the plan is for 1"), std::string::npos) << one.err;
  auto cfg = run("plan --top 1 --nodes 1 --config " + src("examples/plan/llama2_7b_2x8_h100.toml"));
  EXPECT_EQ(cfg.rc, 0) << cfg.err;
  EXPECT_NE(cfg.out.find("llama2-7b"), std::string::npos);
  EXPECT_NE(cfg.out.find("1 x 8 GPUs"), std::string::npos) << cfg.out;  // the flag wins over the file
  fs::path bad = fs::temp_directory_path() / "gpudoctor_bad_plan.toml";
  std::ofstream(bad) << "model = \"gpt2\"\nnodez = 2\n";
  auto b = run("plan --config " + bad.string());
  EXPECT_EQ(b.rc, 3);
  EXPECT_NE(b.err.find(":2: unknown key \"nodez\""), std::string::npos) << b.err;
  fs::remove(bad);
  auto batch = run("plan --model gpt2 --gpus-per-node 8 --tp 1 --pp 1 --global-batch 3");
  EXPECT_EQ(batch.rc, 2);
  EXPECT_NE(batch.err.find("global batch 3"), std::string::npos) << batch.err;
}

TEST(Cli, NcclLog) {
  auto ok = run("nccl log " + src("testdata/nccl_logs/ddp_2xh200_info.log"));
  EXPECT_EQ(ok.rc, 0) << ok.err;
  EXPECT_NE(ok.out.find("P2P/CUMEM x48"), std::string::npos) << ok.out;
  auto j = run("nccl log --json - " + src("testdata/nccl_logs/ddp_2xh200_info.log"));
  ASSERT_EQ(j.rc, 0);
  EXPECT_EQ(nlohmann::json::parse(j.out)["communicators"][0]["coll_channels"], 24);
  auto bad = run("nccl log " + src("testdata/bad/not_a_trace.json"));
  EXPECT_EQ(bad.rc, 3);
  EXPECT_EQ(lines(bad.err), 1);
  EXPECT_NE(bad.err.find("no NCCL lines"), std::string::npos) << bad.err;
  EXPECT_EQ(run("nccl log").rc, 2);
}

TEST(Cli, EmptyDirectoryAndUsageErrors) {
  fs::path d = fs::temp_directory_path() / "gpudoctor_empty_dir";
  fs::create_directories(d);
  auto r = run("analyze " + d.string());
  EXPECT_EQ(r.rc, 3);
  EXPECT_NE(r.err.find("no trace files"), std::string::npos) << r.err;
  EXPECT_EQ(run("analyze --no-such-flag").rc, 2);
  EXPECT_EQ(run("analyze --steps 3-1").rc, 2);
  EXPECT_EQ(run("").rc, 2);
  EXPECT_EQ(run("--help").rc, 0);
}

TEST(Cli, NoJsonLeftBehindOnError) {
  fs::path out = fs::temp_directory_path() / "gpudoctor_cli_bad.json";
  fs::remove(out);
  auto r = run("analyze -q --json " + out.string() + " " + src("testdata/bad/truncated.json.gz"));
  EXPECT_EQ(r.rc, 3);
  EXPECT_FALSE(fs::exists(out));
  auto r2 = run("analyze -q --json /nonexistent_dir/x.json " + src("examples/ddp_bf16_flash"));
  EXPECT_EQ(r2.rc, 3);
  EXPECT_NE(r2.err.find("/nonexistent_dir/x.json"), std::string::npos) << r2.err;
}

// `analyze --json TRACE` (the trace meant as input) analyzed the bundled example and replaced TRACE
// with its document: a file that is a trace or gzip is never overwritten.
TEST(Cli, JsonNeverOverwritesATrace) {
  const fs::path dir = fs::temp_directory_path() / "gpudoctor_cli_json_trace";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path gz = dir / "a.pt.trace.json.gz", plain = dir / "a.json";
  fs::copy_file(src("testdata/whatif/launch_bound_mid__base.pt.trace.json.gz"), gz);
  { std::ofstream(plain) << "{\"schemaVersion\": 1, \"traceEvents\": []}"; }
  for (const fs::path& p : {gz, plain}) {
    const auto size = fs::file_size(p);
    auto r = run("analyze -q --json " + p.string());
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_NE(r.err.find("exists and is a trace"), std::string::npos) << r.err;
    EXPECT_EQ(fs::file_size(p), size);
  }
  // A document written before is replaced as usual.
  const fs::path doc = dir / "report.json";
  ASSERT_EQ(run("analyze -q --json " + doc.string() + " " + gz.string()).rc, 0);
  EXPECT_EQ(run("analyze -q --json " + doc.string() + " " + gz.string()).rc, 0);
  fs::remove_all(dir);
}

// NCCL INFO logs feed the findings and the checklist: the real 2 x H200 log passes, a 2-node job on
// TCP sockets with 2 channels is a critical finding.
// --nccl-log takes every file after it, so traces given after it were read as logs ("read failed"
// on the directory): now one line that says so.
TEST(Cli, TracesAfterNcclLogAreNamed) {
  auto r =
      run("analyze --nccl-log " + src("testdata/nccl_logs/ddp_2xh200_info.log") + " " + src("examples/ddp_bf16_flash"));
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("give the traces before it"), std::string::npos) << r.err;
}

TEST(Cli, NcclLogFeedsTheDiagnosis) {
  auto ok = run("analyze -q --json - --nccl-log " + src("testdata/nccl_logs/ddp_2xh200_info.log"));
  ASSERT_EQ(ok.rc, 0) << ok.err;
  auto j = nlohmann::json::parse(ok.out);
  bool item = false;
  for (const auto& c : j["diagnosis"]["checklist"])
    if (c["item"].get<std::string>().find("NCCL transports") != std::string::npos) {
      item = true;
      EXPECT_EQ(c["status"], "pass") << c.dump();
    }
  EXPECT_TRUE(item);
  auto bad = run("analyze -q --json - --nccl-log " + src("testdata/nccl_logs/multinode_socket.log"));
  ASSERT_EQ(bad.rc, 0) << bad.err;
  j = nlohmann::json::parse(bad.out);
  bool sockets = false;
  for (const auto& f : j["diagnosis"]["findings"])
    sockets |= f["id"] == "nccl.log" && f["severity"] == "critical" &&
               f["title"].get<std::string>().find("TCP sockets") != std::string::npos;
  EXPECT_TRUE(sockets) << j["diagnosis"]["findings"].dump(1);
  auto missing = run("analyze -q --nccl-log /nonexistent.log");
  EXPECT_EQ(missing.rc, 3);
  EXPECT_NE(missing.err.find("/nonexistent.log"), std::string::npos);
}

}  // namespace

namespace gpudoctor {
namespace {

// nccl bench's flags as nccl-tests': -c is the check (0/1), collectives are --collectives; a dtype
// it cannot run is a usage error before any GPU is looked for; under torchrun variables on a node
// without GPUs it says so at once instead of waiting for the rendezvous (was: 120 s of silence).
TEST(Cli, NcclBenchFlagsAndNoGpu) {
  if (std::filesystem::exists("/dev/nvidia0")) GTEST_SKIP() << "a GPU is here: the GPU checks cover nccl bench";
  auto fp8 = testing::run("nccl bench -d fp8");
  if (fp8.err.find("The following argument was not expected") != std::string::npos ||
      fp8.err.find("unknown verb") != std::string::npos)
    GTEST_SKIP() << "a build without CUDA has no nccl bench";
  EXPECT_EQ(fp8.rc, 2) << fp8.err;
  EXPECT_NE(fp8.err.find("no fp8"), std::string::npos) << fp8.err;
  auto check0 = testing::run("nccl bench -c 0 -b 8 -e 8");
  EXPECT_EQ(check0.rc, 4) << check0.err;  // no NCCL or no GPU here
  EXPECT_EQ(check0.err.find("unknown collective"), std::string::npos) << check0.err;
  EXPECT_EQ(testing::run("nccl bench -c 2").rc, 2);
  EXPECT_EQ(testing::run("nccl bench --collectives allreduce,bogus").rc, 2);
  // Rank 1 would wait for rank 0's id; the message shows the GPU check came first.
  auto joined = testing::run("nccl bench", "RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=29511");
  EXPECT_EQ(joined.rc, 4) << joined.err;
  if (joined.err.find("libnccl") == std::string::npos) {  // where NCCL itself loads, the GPU check speaks
    EXPECT_NE(joined.err.find("no GPU found on this node"), std::string::npos) << joined.err;
  }
}

}  // namespace
// --measured-step-ms: the step the job's logs give anchors the replay; a number the trace cannot
// give, or that is no step time, is one error line and exit 2, with no JSON written.
TEST(Cli, MeasuredStepAnchorsTheReplay) {
  const std::string trace = src("testdata/whatif/ckpt_large__base.pt.trace.json.gz");
  auto ok = run("analyze -q " + trace + " --measured-step-ms 33.14 --json -");
  ASSERT_EQ(ok.rc, 0) << ok.err;
  auto j = nlohmann::json::parse(ok.out);
  const auto& w = j["diagnosis"]["what_if"];
  ASSERT_TRUE(w.contains("anchor")) << w.dump();
  EXPECT_EQ(w["anchor"]["measured_step_ns"], 33'140'000);
  EXPECT_EQ(w["anchor"]["matched"], true);
  EXPECT_TRUE(w["anchor"]["note"].is_null());
  EXPECT_NEAR(w["unprofiled_step_ns"].get<double>() / 33.14e6, 1.0, 0.002);
  EXPECT_LT(w["anchor"]["profiler_cost_factor"].get<double>(), 1.0);
  auto plain = nlohmann::json::parse(run("analyze -q " + trace + " --json -").out);
  EXPECT_FALSE(plain["diagnosis"]["what_if"].contains("anchor"));
  auto text = run("analyze -q " + trace + " --measured-step-ms 33.14");
  std::string joined = text.out;  // wrapped lines continue after a two-space indent
  for (size_t i; (i = joined.find("\n  ")) != std::string::npos;) joined.replace(i, 3, " ");
  EXPECT_NE(joined.find("matched to the measured 33.14 ms"), std::string::npos) << text.out;
  const auto out = scratch() / "anchored.json";
  for (const char* bad : {"5", "500", "nan", "-3", "0", "1e9", "12abc"}) {
    fs::remove(out);
    auto r = run("analyze " + trace + " --measured-step-ms " + bad + " --json " + out.string());
    EXPECT_EQ(r.rc, 2) << bad << ": " << r.err;
    EXPECT_NE(r.err.find("--measured-step-ms"), std::string::npos) << bad << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << bad << ": " << r.err;
    EXPECT_FALSE(fs::exists(out)) << bad;
  }
  auto both = run("analyze " + trace + " --measured-step-ms 33 --no-what-if");
  EXPECT_EQ(both.rc, 2);
  // A trace the replay cannot model keeps its analysis: a warning, exit 0, what_if unavailable.
  const auto nolaunch = scratch() / "nolaunch.json";
  {
    std::string ev =
        R"({"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":1000,"dur":100000})";
    for (int k = 0; k < 10; ++k)
      ev += fmt::format(R"(,{{"ph":"X","cat":"kernel","name":"my_gemm","pid":0,"tid":7,"ts":{},"dur":4000,)"
                        R"("args":{{"device":0,"stream":7}}}})",
                        2000 + 5000 * k);
    std::ofstream(nolaunch) << R"({"schemaVersion":1,"traceEvents":[)" << ev << "]}";
  }
  auto unmodeled = run("analyze " + nolaunch.string() + " --measured-step-ms 0.05 --json -");
  EXPECT_EQ(unmodeled.rc, 0) << unmodeled.err;
  EXPECT_NE(unmodeled.err.find("no replay to anchor"), std::string::npos) << unmodeled.err;
  auto uj = nlohmann::json::parse(unmodeled.out);
  EXPECT_TRUE(uj["diagnosis"]["what_if"]["unprofiled_step_ns"].is_null());
  EXPECT_FALSE(uj["diagnosis"]["what_if"].contains("anchor"));
  auto stream = run("analyze --stream " + trace + " --measured-step-ms 33");
  EXPECT_EQ(stream.rc, 2);
  EXPECT_NE(stream.err.find("streaming mode"), std::string::npos) << stream.err;
}

}  // namespace gpudoctor
