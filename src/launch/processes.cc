#include "launch/processes.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace gpudoctor {

Result<std::vector<ProcessExit>> runProcesses(const std::string& exe,
                                              const std::vector<std::vector<std::string>>& argvs,
                                              const std::vector<std::string>& env) {
  std::vector<pid_t> kids;
  for (const auto& argv : argvs) {
    pid_t pid = fork();
    if (pid < 0) return Error{std::string("fork failed: ") + std::strerror(errno)};
    if (pid == 0) {
      for (const auto& e : env) {
        size_t eq = e.find('=');
        setenv(e.substr(0, eq).c_str(), eq == std::string::npos ? "" : e.c_str() + eq + 1, 1);
      }
      std::vector<std::string> args = argv;
      std::vector<char*> cargs;
      for (auto& s : args) cargs.push_back(s.data());
      cargs.push_back(nullptr);
      execv(exe.c_str(), cargs.data());
      _exit(127);
    }
    kids.push_back(pid);
  }
  std::vector<ProcessExit> exits;
  for (pid_t kid : kids) {
    int st = 0;
    waitpid(kid, &st, 0);
    ProcessExit e;
    if (WIFSIGNALED(st))
      e.signal = WTERMSIG(st);
    else
      e.exit_code = WEXITSTATUS(st);
    exits.push_back(e);
  }
  return exits;
}

namespace {

pid_t g_foreground_job = -1;
void forwardSignal(int sig) {
  if (g_foreground_job > 0) kill(g_foreground_job, sig);
}

}  // namespace

Result<int> runForegroundJob(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  if (argv.empty()) return Error{"no command to run"};
  std::vector<std::string> args = argv, vars = env;
  std::vector<char*> cargs, envp;
  for (auto& s : args) cargs.push_back(s.data());
  cargs.push_back(nullptr);
  for (auto& s : vars) envp.push_back(s.data());
  envp.push_back(nullptr);
  struct sigaction ign {
  }, fwd{};
  ign.sa_handler = SIG_IGN;
  fwd.sa_handler = forwardSignal;
  sigemptyset(&fwd.sa_mask);
  sigaction(SIGINT, &ign, nullptr);
  sigaction(SIGQUIT, &ign, nullptr);
  sigaction(SIGTERM, &fwd, nullptr);
  sigaction(SIGHUP, &fwd, nullptr);
  pid_t pid = -1;
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t def;
  sigemptyset(&def);
  sigaddset(&def, SIGINT);
  sigaddset(&def, SIGQUIT);
  posix_spawnattr_setsigdefault(&attr, &def);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  int rc = posix_spawnp(&pid, cargs[0], nullptr, &attr, cargs.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return Error{"cannot run " + argv[0] + ": " + std::strerror(rc)};
  g_foreground_job = pid;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  g_foreground_job = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
}

std::string shellQuote(const std::string& v) {
  std::string q = "'";
  for (char c : v) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

Result<CapturedRun> runCaptured(const std::vector<std::string>& unset, const std::vector<std::string>& env,
                                const std::string& command) {
  std::string cmd = "env ";
  for (const auto& u : unset) cmd += "-u " + u + " ";
  for (const auto& e : env) {
    size_t eq = e.find('=');
    cmd += e.substr(0, eq + 1) + shellQuote(e.substr(eq + 1)) + " ";
  }
  cmd += command + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return Error{"cannot start " + command};
  CapturedRun r;
  char buf[65536];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) r.output.append(buf, n);
  r.status = pclose(p);
  return r;
}

int localGpuCount() {
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES"); v && *v) {
    int n = 1;
    for (const char* p = v; *p; ++p) n += *p == ',';
    return n;
  }
  int n = 0;
  while (std::filesystem::exists("/dev/nvidia" + std::to_string(n))) ++n;
  return n;
}

}  // namespace gpudoctor
