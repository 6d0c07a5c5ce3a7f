// The exit status of every verb: one table (README.md "Exit status", docs/reference/*.md, each
// verb's --help footer). A test runs every verb's failure paths against it
// (src/cli/exit_codes_cli_test.cc).
#pragma once

namespace gpudoctor::cli {

// (ints, not an enum: verbs return them beside counts and the job's own status)
inline constexpr int kOk = 0;
// The answer is no: a gate failed (compare --fail-if-slower, checklist --strict, nccl env
// --strict), a measurement's own check failed (bench gpu, nccl bench's #wrong), or nothing fits
// (plan, place). The output is complete.
inline constexpr int kGateFailed = 1;
// Usage: an unknown verb or flag, a bad value, flags that conflict. Nothing was read or written.
inline constexpr int kUsage = 2;
// Bad input or I/O: a missing, truncated or foreign file, an unwritable output, a failed write
// on stdout.
inline constexpr int kBadInput = 3;
// Not on this machine: no GPU, no NVIDIA driver (NVML, CUDA), or a build without CUDA.
inline constexpr int kNoDevice = 4;
// Stopped by Ctrl-C before it finished (bench io, after removing its scratch files): 128 + SIGINT,
// as a shell reports an interrupted command.
inline constexpr int kInterrupted = 130;

// The table as --help prints it under every verb.
inline constexpr const char* kExitStatusHelp =
    "Exit status: 0 ok; 1 a gate or check failed, or nothing fits; 2 usage error; 3 bad input or I/O "
    "error; 4 no GPU, driver or CUDA build here.";

}  // namespace gpudoctor::cli
