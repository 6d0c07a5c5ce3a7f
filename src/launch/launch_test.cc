// The launch layer without a GPU: the NCCL-id rendezvous over localhost with two threads as ranks,
// its time-outs, the hex form, and child processes run through /bin/sh.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <thread>

#include "cli/cli_test_util.h"
#include "launch/processes.h"
#include "launch/rendezvous.h"

namespace gpudoctor {
namespace {

LaunchEnv rankEnv(int rank, int world, int port) {
  LaunchEnv l;
  l.joined = true;
  l.rank = rank;
  l.world_size = world;
  l.master_addr = "127.0.0.1";
  l.id_port = port;
  return l;
}

TEST(Rendezvous, RankZeroHandsItsIdToTheOthers) {
  const int port = testing::freePort();
  std::array<char, 128> id0{}, id1{}, id2{};
  for (size_t i = 0; i < id0.size(); ++i) id0[i] = static_cast<char>(i * 7 + 1);
  Status s0, s1, s2;
  std::thread r0([&] { s0 = exchangeId(rankEnv(0, 3, port), id0, std::chrono::seconds(20)); });
  std::thread r1([&] { s1 = exchangeId(rankEnv(1, 3, port), id1, std::chrono::seconds(20)); });
  std::thread r2([&] { s2 = exchangeId(rankEnv(2, 3, port), id2, std::chrono::seconds(20)); });
  r0.join(), r1.join(), r2.join();
  ASSERT_TRUE(s0.ok()) << s0.message();
  ASSERT_TRUE(s1.ok()) << s1.message();
  ASSERT_TRUE(s2.ok()) << s2.message();
  EXPECT_EQ(id1, id0);
  EXPECT_EQ(id2, id0);
}

TEST(Rendezvous, TimeOutsNameWhoIsMissing) {
  std::array<char, 128> id{};
  Status s = exchangeId(rankEnv(0, 2, testing::freePort()), id, std::chrono::milliseconds(300));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "rank 0: only 1 of 2 ranks asked for the NCCL id within 0.3 s");
  const int port = testing::freePort();
  s = exchangeId(rankEnv(1, 2, port), id, std::chrono::milliseconds(300));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "rank 1: rank 0 at 127.0.0.1:" + std::to_string(port) + " did not answer within 0.3 s");
}

TEST(Rendezvous, HexRoundTripsAndRejectsBadText) {
  std::array<char, 4> in{'\x00', '\x7f', '\x80', '\xff'}, out{};
  EXPECT_EQ(hexBytes(in), "007f80ff");
  ASSERT_TRUE(unhexBytes("007f80ff", out));
  EXPECT_EQ(out, in);
  EXPECT_FALSE(unhexBytes("007f80f", out));     // odd length
  EXPECT_FALSE(unhexBytes("007f80fg", out));    // not hex
  EXPECT_FALSE(unhexBytes("007f80ff00", out));  // too long
}

TEST(Processes, EachRankRunsWithTheEnvironmentAndIsWaitedFor) {
  auto exits = runProcesses("/bin/sh",
                            {{"sh", "-c", "test \"$GPUDOCTOR_TEST_ID\" = abc && exit 0; exit 9"},
                             {"sh", "-c", "exit 3"},
                             {"sh", "-c", "kill -TERM $$"}},
                            {"GPUDOCTOR_TEST_ID=abc"});
  ASSERT_TRUE(exits.ok()) << exits.error().message;
  ASSERT_EQ(exits.value().size(), 3u);
  EXPECT_EQ(exits.value()[0].exit_code, 0);
  EXPECT_EQ(exits.value()[0].signal, 0);
  EXPECT_EQ(exits.value()[1].exit_code, 3);
  EXPECT_EQ(exits.value()[2].signal, 15);
  auto missing = runProcesses("/nonexistent/program", {{"x"}}, {});
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing.value()[0].exit_code, 127);
}

TEST(Processes, CapturedRunsSeeOnlyTheirEnvironment) {
  setenv("GPUDOCTOR_TEST_GONE", "here", 1);
  auto r = runCaptured({"GPUDOCTOR_TEST_GONE"}, {"GPUDOCTOR_TEST_SET=it's quoted"},
                       "sh -c 'echo \"[$GPUDOCTOR_TEST_GONE][$GPUDOCTOR_TEST_SET]\"; echo err >&2; exit 4'");
  unsetenv("GPUDOCTOR_TEST_GONE");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value().output, "[][it's quoted]\nerr\n");
  EXPECT_TRUE(WIFEXITED(r.value().status));
  EXPECT_EQ(WEXITSTATUS(r.value().status), 4);
  EXPECT_EQ(shellQuote("a'b"), "'a'\\''b'");
}

// The foreground job: its exit code, 128 + the signal that killed it, its environment exactly `env`,
// and an error for a command that is not there. The handlers it sets are put back after.
TEST(Processes, ForegroundJobExitCodesAndEnvironment) {
  auto code = runForegroundJob({"sh", "-c", "exit 3"}, {"PATH=/usr/bin:/bin"});
  ASSERT_TRUE(code.ok()) << code.message();
  EXPECT_EQ(code.value(), 3);
  code = runForegroundJob({"/bin/sh", "-c", "kill -TERM $$"}, {});
  ASSERT_TRUE(code.ok()) << code.message();
  EXPECT_EQ(code.value(), 128 + SIGTERM);
  code = runForegroundJob({"/bin/sh", "-c", "test \"$ONLY\" = yes && test -z \"$HOME\""}, {"ONLY=yes"});
  ASSERT_TRUE(code.ok()) << code.message();
  EXPECT_EQ(code.value(), 0);
  code = runForegroundJob({"gpudoctor-no-such-command"}, {"PATH=/usr/bin:/bin"});
  ASSERT_FALSE(code.ok());
  EXPECT_NE(code.message().find("cannot run gpudoctor-no-such-command: "), std::string::npos) << code.message();
  EXPECT_FALSE(runForegroundJob({}, {}).ok());
  for (int sig : {SIGINT, SIGQUIT, SIGTERM, SIGHUP}) signal(sig, SIG_DFL);
}

}  // namespace
}  // namespace gpudoctor
