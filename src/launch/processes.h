// Child processes: the ranks of a local job (fork + exec of one program per rank, all waited for)
// and one-shot runs through the shell with their output captured (nccl tune's fresh processes).
// No CUDA, no NCCL: tested with /bin/sh.
#pragma once
#include <string>
#include <vector>

#include "common/result.h"

namespace gpudoctor {

// How one child ended: its exit code, or the signal that killed it (0: none).
struct ProcessExit {
  int exit_code = 0;
  int signal = 0;
};

// Starts `exe` once per entry of `argvs` (each a full argv, argv[0] included) with `env` (NAME=VALUE)
// added to its environment, then waits for them in order. An exec that fails exits 127.
Result<std::vector<ProcessExit>> runProcesses(const std::string& exe,
                                              const std::vector<std::vector<std::string>>& argvs,
                                              const std::vector<std::string>& env);

// Runs one job in the foreground (record's): `argv[0]` found on PATH, `env` (NAME=VALUE) its whole
// environment. Ctrl-C reaches the job directly (same process group), so this process ignores INT and
// QUIT from here on (the job gets them at their defaults) and waits to report; TERM and HUP (a
// scheduler's cancel) are passed on to the job. Returns the job's exit code, 128 + N when signal N
// killed it; an error when it cannot be started.
Result<int> runForegroundJob(const std::vector<std::string>& argv, const std::vector<std::string>& env);

// A one-shot run: its wait status (pclose's) and stdout and stderr together.
struct CapturedRun {
  int status = 0;
  std::string output;
};

// Runs the shell command `command` under env(1) with `unset` removed from and `env` (NAME=VALUE,
// values quoted) added to its environment, stderr folded into stdout.
Result<CapturedRun> runCaptured(const std::vector<std::string>& unset, const std::vector<std::string>& env,
                                const std::string& command);

// `v` as one single-quoted shell word.
std::string shellQuote(const std::string& v);

// GPUs this host offers a local job: CUDA_VISIBLE_DEVICES' entries when set, else /dev/nvidiaN.
int localGpuCount();

}  // namespace gpudoctor
