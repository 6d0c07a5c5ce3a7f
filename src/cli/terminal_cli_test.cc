// The terminal as a user meets it: --color on the verbs that print reports (auto: a terminal only,
// NO_COLOR and TERM=dumb honoured), no escape in a file, a pipe, JSON or HTML; critical findings
// first; fixes as blocks that paste.
#include <gtest/gtest.h>

#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"

namespace gpudoctor::testing {
namespace terminal_cli_test {
bool hasEscape(const std::string& s) { return s.find('\x1b') != std::string::npos; }

std::string strip(const std::string& s) { return std::regex_replace(s, std::regex("\x1b\\[[0-9;]*m"), ""); }

// The report less its read-rate footer (a timing, different on every run).
std::string untimed(const std::string& s) {
  return std::regex_replace(s, std::regex("\nRead [^\n]* of JSON in [^\n]*\n"), "\n");
}

// Runs `gpudoctor ARGS` with stdout and stderr on a pseudo-terminal, TERM and NO_COLOR as given
// (nullptr: unset); returns what the terminal showed.
std::string onTerminal(const std::vector<std::string>& args, const char* term, const char* no_color) {
  int master = -1;
  winsize ws{};
  ws.ws_col = 100;
  ws.ws_row = 50;
  pid_t pid = forkpty(&master, nullptr, nullptr, &ws);
  if (pid == 0) {
    term ? setenv("TERM", term, 1) : unsetenv("TERM");
    no_color ? setenv("NO_COLOR", no_color, 1) : unsetenv("NO_COLOR");
    unsetenv("COLUMNS");
    std::vector<char*> argv;
    const std::string bin = testBin();
    argv.push_back(const_cast<char*>(bin.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  EXPECT_GT(pid, 0) << "forkpty";
  if (pid < 0) return "";
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = read(master, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;  // EIO once the child has closed the terminal
  }
  close(master);
  int st = 0;
  waitpid(pid, &st, 0);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << out;
  return out;
}

TEST(CliColor, AutoColoursATerminalOnly) {
  const std::vector<std::string> analyze = {"analyze", "-q", "--findings", "3"};
  EXPECT_NE(onTerminal(analyze, "xterm-256color", nullptr).find("\x1b[1mgpudoctor analyze: 2 ranks"),
            std::string::npos);
  EXPECT_TRUE(hasEscape(onTerminal(analyze, "xterm", ""))) << "an empty NO_COLOR does not count (no-color.org)";
  EXPECT_FALSE(hasEscape(onTerminal(analyze, "xterm", "1"))) << "NO_COLOR set";
  EXPECT_FALSE(hasEscape(onTerminal(analyze, "dumb", nullptr))) << "TERM=dumb";
  EXPECT_FALSE(hasEscape(onTerminal(analyze, nullptr, nullptr))) << "no TERM";
  auto with = [&](const char* flag) {
    auto a = analyze;
    a.push_back(flag);
    return a;
  };
  EXPECT_FALSE(hasEscape(onTerminal(with("--color=never"), "xterm", nullptr)));
  EXPECT_TRUE(hasEscape(onTerminal(with("--color=always"), "xterm", "1"))) << "the flag overrides NO_COLOR";
  // A pipe or a file: plain, whatever the terminal type.
  auto file = run("analyze -q", "TERM=xterm-256color");
  ASSERT_EQ(file.rc, 0) << file.err;
  EXPECT_FALSE(hasEscape(file.out));
}

TEST(CliColor, AlwaysIsThePlainReportWithEscapes) {
  auto plain = run("analyze -q --color=never");
  auto colored = run("analyze -q --color=always", "NO_COLOR=1");
  ASSERT_EQ(plain.rc, 0) << plain.err;
  ASSERT_EQ(colored.rc, 0) << colored.err;
  EXPECT_FALSE(hasEscape(plain.out));
  EXPECT_NE(colored.out.find("\x1b[31m[critical]\x1b[0m"), std::string::npos) << colored.out;
  EXPECT_NE(colored.out.find("\x1b[1mPer rank, mean per step"), std::string::npos) << colored.out;
  EXPECT_EQ(untimed(strip(colored.out)), untimed(plain.out));
  // The checklist and compare take the same flag.
  auto checklist = run("checklist -q --color=always");
  EXPECT_NE(checklist.out.find("\x1b[1mChecklist\x1b[0m"), std::string::npos) << checklist.out;
  EXPECT_FALSE(hasEscape(run("checklist -q --color=never").out));
  const std::string sides = src("examples/ddp_bf16_flash") + " " + src("examples/ddp_bf16_flash");
  auto compare = run("compare " + sides + " --color=always");
  ASSERT_EQ(compare.rc, 0) << compare.err;
  EXPECT_NE(compare.out.find("\x1b[1mgpudoctor compare: 2 ranks"), std::string::npos) << compare.out;
  EXPECT_EQ(strip(compare.out), run("compare " + sides).out);
  auto bad = run("analyze --color=sometimes");
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("--color"), std::string::npos) << bad.err;
}

TEST(CliColor, DocumentsNeverCarryEscapes) {
  auto json = run("analyze -q --color=always --json -");
  ASSERT_EQ(json.rc, 0) << json.err;
  EXPECT_FALSE(hasEscape(json.out));
  auto html = run("analyze -q --color=always --html -");
  ASSERT_EQ(html.rc, 0) << html.err;
  EXPECT_FALSE(hasEscape(html.out));
  const auto file = scratch() / "color.json";
  auto both = run("analyze -q --color=always --json " + file.string());
  EXPECT_TRUE(hasEscape(both.out));  // the text on stdout, in colour
  EXPECT_FALSE(hasEscape(slurp(file)));
  const std::string sides = src("examples/ddp_bf16_flash") + " " + src("examples/ddp_bf16_flash");
  EXPECT_FALSE(hasEscape(run("compare " + sides + " --color=always --json -").out));
}

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

// nccl env and nccl log print their fixes as analyze does: "fix:" alone, the line to paste under it,
// advice in words as "# " comments; no line carries a "fix: " prefix.
TEST(CliReport, NcclFixesAreBlocksThatPaste) {
  auto env = run("nccl env --no-host --nccl-version 2.28.9 --from " + src("testdata/nccl_env/mixed.sh"));
  ASSERT_TRUE(env.rc == 0 || env.rc == 1) << env.err;
  EXPECT_NE(env.out.find("    fix:\n        unset NCCL_ALGO   # per-size choices belong in a tuner plugin\n"),
            std::string::npos)
      << env.out;
  EXPECT_NE(env.out.find("    fix:\n        NCCL_MIN_CTAS=4\n"), std::string::npos) << env.out;
  EXPECT_NE(env.out.find("    fix:\n        # delete this line\n"), std::string::npos) << env.out;
  EXPECT_EQ(env.out.find("fix: "), std::string::npos) << env.out;
  auto log = run("nccl log " + src("testdata/nccl_logs/multinode_socket.log"), "COLUMNS=80");
  ASSERT_EQ(log.rc, 0) << log.err;
  EXPECT_NE(log.out.find("    fix:\n        # install/enable the RDMA NIC driver"), std::string::npos) << log.out;
  EXPECT_EQ(log.out.find("fix: "), std::string::npos) << log.out;
  std::istringstream in(log.out);
  for (std::string line; std::getline(in, line);) EXPECT_LE(line.size(), 80u) << line;
}

// compare names kernels as the traces spell them (the HTML page's kernels_shown), not by the match
// keys with "#" for digits; --json keeps the keys.
TEST(CliReport, CompareShowsKernelNamesNotMatchKeys) {
  const std::string sides = src("testdata/whatif/gpt_fp32_naive__base.pt.trace.json.gz") + " " +
                            src("testdata/whatif/gpt_fp32_naive__bf16.pt.trace.json.gz");
  auto r = run("compare " + sides);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("Kernels that moved most"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sm80_xmma_gemm_f32f32"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("sm#"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("f#f#"), std::string::npos) << r.out;
  auto j = run("compare " + sides + " --json -");
  ASSERT_EQ(j.rc, 0) << j.err;
  EXPECT_NE(j.out.find("sm#_xmma_gemm_f#f#"), std::string::npos) << "the JSON keeps its match keys";
}

// A GPU-bound job whose host runs about 2.5 steps ahead: its windows (cut at the host's step marks) show
// the host's 13 ms period and the last one the GPU's backlog; the report says so under the window table.
TEST(CliReport, AWindowHoldingTheGpusBacklogIsToldApart) {
  auto ahead = run("analyze -q --no-what-if " + src("testdata/lab/gru_lm_fp32__base.pt.trace.json.gz"));
  ASSERT_EQ(ahead.rc, 0) << ahead.err;
  const std::string text = std::regex_replace(ahead.out, std::regex("\n +"), " ");
  EXPECT_NE(text.find("the host ran ahead of the GPU (median launch latency 77.4 ms): each window shows the "
                      "host's period (12.993 ms in the median) and the last one (123.464 ms) holds the GPU's backlog"),
            std::string::npos)
      << ahead.out;
  auto html = run("analyze -q --no-what-if --html - " + src("testdata/lab/gru_lm_fp32__base.pt.trace.json.gz"));
  ASSERT_EQ(html.rc, 0) << html.err;
  EXPECT_NE(html.out.find("the last one (123.464 ms) holds the GPU's backlog"), std::string::npos)
      << "the page's step table says it too";
  auto example = run("analyze -q --no-what-if");  // host-bound: the windows are its steps
  ASSERT_EQ(example.rc, 0) << example.err;
  EXPECT_EQ(example.out.find("ran ahead"), std::string::npos) << example.out;
}

}  // namespace terminal_cli_test
}  // namespace gpudoctor::testing
