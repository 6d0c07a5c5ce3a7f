// What `nccl bench` and `nccl tune` share on the command line: the size sweep in nccl-tests' flags.
#pragma once
#include <string>

#include <CLI/CLI.hpp>

namespace gpudoctor::cli {

// The sweep both `bench` and `tune` take (nccl-tests' flags).
struct SweepArgs {
  int gpus = 0;
  std::string min_bytes = "8", max_bytes = "128M", collectives = "allreduce", dtype = "float";
  double factor = 2;
  int iters = 20, warmup = 5;
};

// Registers the sweep's flags on `cmd`.
inline void addSweepOptions(CLI::App* cmd, SweepArgs& a, const std::string& collectives_help) {
  cmd->add_option("-g,--gpus", a.gpus, "GPUs on this node (default: all visible)");
  cmd->add_option("-b,--minbytes", a.min_bytes, "Smallest size (8, 64K, 128M, 8G)")->capture_default_str();
  cmd->add_option("-e,--maxbytes", a.max_bytes, "Largest size")->capture_default_str();
  cmd->add_option("-f,--stepfactor", a.factor, "Size multiplier")->capture_default_str();
  // Long only: nccl-tests' -c is its check flag (bench's -c, --check).
  cmd->add_option("--collectives", a.collectives, collectives_help)->capture_default_str();
  cmd->add_option("-d,--dtype", a.dtype, "float, half, bfloat16, int32, double")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            for (const char* d : {"float", "half", "bfloat16", "int32", "double"})
              if (v == d) return {};
            return "-d " + v + ": this benchmark has float, half, bfloat16, int32, double" +
                   (v.rfind("fp8", 0) == 0 || v.rfind("f8", 0) == 0
                        ? std::string(" (no fp8: this benchmark does not measure it)")
                        : std::string());
          },
          "DTYPE"));
  cmd->add_option("-n,--iters", a.iters, "Timed iterations per size")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_option("-w,--warmup", a.warmup, "Warm-up iterations per size")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
}

}  // namespace gpudoctor::cli
