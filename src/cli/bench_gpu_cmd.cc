// `gpudoctor bench gpu`: this GPU's ceilings and what each compute optimization buys (CUDA builds;
// elsewhere the verb checks its options and says it needs CUDA).
#include <algorithm>
#include <cstdio>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>

#include "analysis/gpu_speedups.h"
#include "cli/commands.h"
#include "cli/json_output.h"
#include "cli/usage.h"
#include "probes/cuda/cuda_runtime_probe.h"
#include "report/bench_gpu_report.h"
#include "sources/ceilings_file/ceilings_file.h"
#ifdef GPUDOCTOR_HAVE_CUDA
#include "gpu/bench/gpu_bench.h"
#endif

namespace gpudoctor::cli {

namespace {

struct GpuArgs {
  bool quick = false, quiet = false;
  std::string only = "gemm,bandwidth,attention,fusion";
  std::string ceilings_out, datasheet, json;
  int device = 0;
};

int runGpu(const GpuArgs& a) {
  if (!a.datasheet.empty()) {
    // No measurement: the datasheet's figures as a ceilings file (for hosts without the GPU).
    auto c = datasheetCeilings(a.datasheet);
    if (!c)
      return fail("--datasheet " + a.datasheet + ": no datasheet figures for it (known: H100 SXM, H200 SXM)", kUsage);
    std::string e = writeDocument(a.ceilings_out.empty() ? "-" : a.ceilings_out, ceilingsToJson(*c));
    return e.empty() ? kOk : fail(e);
  }
  bool parts[4] = {false, false, false, false};
  std::stringstream ss(a.only);
  for (std::string item; std::getline(ss, item, ',');) {
    const char* names[] = {"gemm", "bandwidth", "attention", "fusion"};
    auto it = std::find(std::begin(names), std::end(names), item);
    if (it == std::end(names))
      return fail("--only: unknown part \"" + item + "\" (gemm, bandwidth, attention, fusion)", kUsage);
    parts[it - std::begin(names)] = true;
  }
#ifdef GPUDOCTOR_HAVE_CUDA
  GpuBenchOptions opt;
  opt.quick = a.quick;
  opt.gemm = parts[0], opt.bandwidth = parts[1], opt.attention = parts[2], opt.fusion = parts[3];
  opt.device = a.device;
  // No driver or no device: this machine cannot run it (4), said before any part starts.
  if (auto d = probeCudaDriver(); !d.ok() || d.value().devices < 1)
    return fail(
        std::string("bench gpu: no usable GPU here (") + (d.ok() ? "no CUDA devices" : "no NVIDIA driver") + ")",
        kNoDevice);
  if (!a.quiet)
    opt.progress = [](const std::string& line) {
      std::fprintf(stderr, "[bench gpu] %s\n", line.c_str());
      std::fflush(stderr);
    };
  auto r = runGpuBench(opt);
  if (!r.ok()) return fail(r.error().message, kBadInput);
  auto speedups = gpuSpeedups(r.value());
  std::string json = a.json.empty() ? "" : renderGpuBenchJson(r.value(), speedups);
  std::string text = jsonOnly(a.json) ? "" : renderGpuBenchText(r.value(), speedups);
  if (std::string err = writeOutputs(a.json, text, json); !err.empty()) return fail(err, kBadInput);
  if (!a.ceilings_out.empty())
    if (std::string e = writeDocument(a.ceilings_out, ceilingsToJson(ceilingsFromBench(r.value()))); !e.empty())
      return fail(e);
  // Like nccl bench's #wrong: a figure whose check failed is not a figure.
  return r.value().allPassed() ? kOk : kGateFailed;
#else
  (void)parts;  // validated above so a usage error reads the same in every build
  return fail("bench gpu needs a build with CUDA (configure with the CUDA toolkit installed)", kNoDevice);
#endif
}

}  // namespace

std::function<int()> addBenchGpu(CLI::App* bench) {
  auto a = std::make_shared<GpuArgs>();
  auto* gpu = bench->add_subcommand(
      "gpu",
      "This GPU's measured ceilings and what each compute optimization buys on it: GEMM TFLOP/s per precision "
      "(cuBLASLt FP32, TF32, FP16, BF16, FP8), HBM copy/read/write, host<->device pageable vs pinned, P2P; attention "
      "forward unfused (scores in memory) vs this project's fused flash-style kernel, seq 512 to 16k; elementwise "
      "fusion, launch overhead and CUDA graphs. Every kernel is checked before it is timed. Exit 1 when a check "
      "fails.");
  gpu->add_flag("--quick", a->quick, "Smoke run: fewer shapes, 20 repetitions");
  gpu->add_option("--only", a->only, "Parts to run, a comma list of gemm, bandwidth, attention, fusion")
      ->capture_default_str();
  addJsonOption(gpu, &a->json, "every figure, check and speedup");
  gpu->add_option("--ceilings-out", a->ceilings_out,
                  "Also write the measured ceilings for analyze --ceilings to FILE "
                  "('-': alone on stdout)")
      ->type_name("FILE|-");
  gpu->add_option("--datasheet", a->datasheet,
                  "Measure nothing: write the datasheet ceilings of a GPU (H100, H200) instead")
      ->type_name("GPU");
  gpu->add_option("--device", a->device, "GPU index")->capture_default_str();
  addQuiet(gpu, &a->quiet);
  return [a, gpu] {
    if (!gpu->parsed()) return -1;
    if (std::string e = oneStdout({{"--json", a->json}, {"--ceilings-out", a->ceilings_out}}); !e.empty())
      return fail(e, kUsage);
    return runGpu(*a);
  };
}

}  // namespace gpudoctor::cli
