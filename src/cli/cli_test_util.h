// What the CLI tests share: run the built binary as a user would (exit code, stdout, stderr), a
// scratch folder per test process, and paths into the source tree.
#pragma once
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace gpudoctor::testing {

struct Run {
  int rc;
  std::string out, err;
};

// A folder for this test process's files (tests run as separate processes under ctest).
inline std::filesystem::path scratch() {
  auto d = std::filesystem::temp_directory_path() / ("gpudoctor_cli_" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return d;
}

// A whole file as a string ("" when missing).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// The binary under test: this build's, or GPUDOCTOR_TEST_BIN's (the same tests against another build).
inline std::string testBin() {
  const char* b = std::getenv("GPUDOCTOR_TEST_BIN");
  return b != nullptr && *b != '\0' ? b : GPUDOCTOR_BIN;
}

// Runs `gpudoctor ARGS` through the shell, with `env` assignments in front.
inline Run run(const std::string& args, const std::string& env = "") {
  auto d = scratch();
  std::string cmd = env + " " + testBin() + " " + args + " >" + (d / "out").string() + " 2>" + (d / "err").string();
  int st = std::system(cmd.c_str());
  return {WIFEXITED(st) ? WEXITSTATUS(st) : 128, slurp(d / "out"), slurp(d / "err")};
}

// A loopback TCP port nobody listens on right now.
inline int freePort() {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  close(s);
  return ntohs(a.sin_port);
}

// A path in the source tree.
inline std::string src(const std::string& rel) { return std::string(GPUDOCTOR_SOURCE_DIR) + "/" + rel; }

// Newlines in s.
inline int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

}  // namespace gpudoctor::testing
