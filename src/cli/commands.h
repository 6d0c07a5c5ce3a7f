// The verbs of the gpudoctor binary. Each registers its options on the CLI11 app and returns the
// process exit code (cli/exit_codes.h: 0 ok, 1 a gate failed, 2 usage, 3 bad input or I/O, 4 no device).
#pragma once
#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <string>

#include "cli/exit_codes.h"

namespace gpudoctor::cli {

// Adds `analyze`; the returned callback runs it after parsing.
std::function<int()> addAnalyze(CLI::App& app);
// Adds `compare` (what changed between two runs, and why).
std::function<int()> addCompare(CLI::App& app);
// Adds `checklist` (the guide's checklist judged from traces).
std::function<int()> addChecklist(CLI::App& app);
// Adds `plan` (memory and step-time planner).
std::function<int()> addPlan(CLI::App& app);
// Adds `topo` (this node's GPU topology, NCCL topology XML, measured copy bandwidth).
std::function<int()> addTopo(CLI::App& app);
// Adds `place` (topology-aware GPU placement on a node or a cluster).
std::function<int()> addPlace(CLI::App& app);
// Adds `nccl` and its verbs (`nccl env`, `nccl log`, `nccl bench` in CUDA builds).
std::function<int()> addNccl(CLI::App& app);
// Adds `nccl bench` under `nccl` (CUDA builds); argv() returns the process's command line.
std::function<int()> addNcclBench(CLI::App* nccl, std::function<std::vector<std::string>()> argv);
// Adds `nccl tune` under `nccl` (CUDA builds).
std::function<int()> addNcclTune(CLI::App* nccl);
// Adds `pack` (small files into WebDataset tar shards with an index).
std::function<int()> addPack(CLI::App& app);
// Adds `bench` and its verbs (`bench io`, `bench gpu`).
std::function<int()> addBench(CLI::App& app);
// Adds `bench gpu` under `bench` (bench_gpu_cmd.cc); the callback answers -1 when not chosen.
std::function<int()> addBenchGpu(CLI::App* bench);
// Adds `record` (a CUPTI recording of any CUDA job, read by analyze like a trace).
std::function<int()> addRecord(CLI::App& app);
// Adds `monitor` (live metrics, recording, Prometheus) and `monitor report`.
std::function<int()> addMonitor(CLI::App& app);
// The process's command line, as main() received it.
const std::vector<std::string>& commandLine();
// `record`'s job: the words after `--` (main() keeps them from CLI11).
const std::vector<std::string>& jobCommand();

// The one error line every verb prints ("gpudoctor: error: MESSAGE" on stderr); returns `code`.
inline int fail(const std::string& message, int code = kBadInput) {
  std::fprintf(stderr, "gpudoctor: error: %s\n", message.c_str());
  return code;
}

}  // namespace gpudoctor::cli
