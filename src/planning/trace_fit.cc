#include "planning/trace_fit.h"

#include <fmt/format.h>

namespace gpudoctor {

namespace {

// What the trace calls the job's data parallelism, for a source line; empty: not data parallel as
// the planner models it (unknown).
std::string dataParallelName(const std::string& dp) {
  if (dp == "ddp") return "DDP";
  if (dp == "fsdp") return "FSDP";
  if (dp == "zero") return "DeepSpeed";
  if (dp == "none") return "one process";
  return "";
}

bool powerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

constexpr const char* kGuess = "assumed: the fastest that fits; ";

void fitParallel(const TracedJob& job, TraceFit& f) {
  std::string dp = dataParallelName(job.data_parallel);
  auto degree = [&](int& pin, std::string& from, const char* flag) {
    if (pin > 0) {
      from = flag;
    } else if (!dp.empty()) {
      pin = 1;
      from = "trace: " + dp + ", data parallel only";
    } else {
      from = std::string(kGuess) + flag + " pins it";
    }
  };
  degree(f.pins.tp, f.tp_from, "--tp");
  degree(f.pins.pp, f.pp_from, "--pp");
  if (f.pins.zero >= 0) {
    f.zero_from = "--zero";
  } else if (job.data_parallel == "ddp" || job.data_parallel == "none") {
    f.pins.zero = 0;
    f.zero_from = "trace: " + dp + ", no sharding";
  } else if (job.data_parallel == "fsdp") {
    f.pins.zero = 3;
    f.zero_from = "trace: FSDP, taken as FULL_SHARD (--zero 2: SHARD_GRAD_OP)";
  } else {
    f.zero_from = std::string(kGuess) + (dp.empty() ? "" : "trace: " + dp + ", stage not seen; ") + "--zero pins it";
  }
  if (f.pins.recompute >= 0) {
    f.recompute_from = "--recompute";
  } else if (job.checkpointing) {
    f.pins.recompute = *job.checkpointing ? static_cast<int>(Recompute::kFull) : static_cast<int>(Recompute::kNone);
    f.recompute_from = *job.checkpointing ? "trace: activation checkpointing (selective: attention only)"
                                          : "trace: no recomputation in backward";
  } else {
    f.recompute_from = std::string(kGuess) + "--recompute pins it";
  }
}

void fitMicroBatch(const TracedJob& job, const GivenSettings& given, int64_t global_batch, int gpus, TraceFit& f) {
  if (f.pins.micro_batch > 0) {
    f.micro_from = "--micro-batch";
    return;
  }
  f.micro_from = std::string(kGuess) + "--micro-batch pins it";
  if (!job.accumulation || f.pins.tp <= 0 || f.pins.pp <= 0 || gpus % (f.pins.tp * f.pins.pp)) return;
  int64_t dp = gpus / (f.pins.tp * f.pins.pp), accum = *job.accumulation;
  if (global_batch % (dp * accum)) {
    f.notes.push_back(fmt::format("The trace's accumulation {} x dp {} does not divide the global batch {}: {}", accum,
                                  dp, global_batch,
                                  given.global_batch ? "check --global-batch" : "give the job's --global-batch"));
    return;
  }
  int64_t micro = global_batch / (dp * accum);
  if (!powerOfTwo(micro)) {
    f.notes.push_back(fmt::format(
        "The job's micro-batch would be {} (global batch {} / dp {} / accumulation {}), which the planner does not "
        "model (powers of two only): compared with the nearest it searches",
        micro, global_batch, dp, accum));
    return;
  }
  f.pins.micro_batch = micro;
  f.micro_from = fmt::format("global batch / dp {} / trace's accumulation {}", dp, accum);
}

void fitPrecision(const TracedJob& job, const GivenSettings& given, TraceFit& f) {
  if (given.precision) {
    f.precision_from = "--precision";
  } else if (job.autocast.value_or(false)) {
    f.precision = Precision::kAmp;
    f.precision_from = "trace: torch.autocast" + (job.precision.empty() ? "" : ", " + job.precision + " matrix work");
  } else if (job.autocast && (job.precision == "fp32" || job.precision == "tf32")) {
    f.precision = Precision::kFp32;
    f.precision_from = "trace: " + job.precision + " matrix work, no autocast";
  } else if (job.autocast && (job.precision == "bf16" || job.precision == "fp16")) {
    f.precision = job.precision == "bf16" ? Precision::kBf16Mixed : Precision::kFp16Mixed;
    f.precision_from = "trace: " + job.precision + " matrix work, no autocast";
  } else {
    f.precision_from = "assumed: plan's default; --precision pins it";
  }
}

}  // namespace

TraceFit fitTrace(const TracedJob& job, const GivenSettings& given, int64_t global_batch, int gpus) {
  TraceFit f;
  f.pins = given.pins;
  if (given.gpus) {
    f.gpus_from = "--gpus-per-node x --nodes";
  } else if (job.world > 0) {
    f.gpus = job.world;
    gpus = job.world;
    f.gpus_from = "trace: world size";
  } else {
    f.gpus_from = "assumed: plan's default; --gpus-per-node, --nodes pin it";
  }
  f.batch_from = given.global_batch ? "--global-batch" : "assumed: 8 per GPU; --global-batch pins it";
  fitParallel(job, f);
  fitMicroBatch(job, given, global_batch, gpus, f);
  fitPrecision(job, given, f);
  return f;
}

std::vector<Assumption> describeFit(const TraceFit& f, const PlanResult& chosen, const TrainSpec& t,
                                    const ClusterSpec& k) {
  const auto& c = chosen.cfg;
  auto guessed = [](const std::string& from) { return from.rfind("assumed", 0) == 0; };
  std::vector<Assumption> out;
  auto add = [&](std::string setting, std::string value, const std::string& from) {
    out.push_back({std::move(setting), std::move(value), from, guessed(from)});
  };
  add("GPUs", fmt::format("{} ({} x {})", k.gpus(), k.nodes, k.gpus_per_node), f.gpus_from);
  add("global batch", std::to_string(t.global_batch), f.batch_from);
  add("precision", std::string(precisionName(t.precision)), f.precision_from);
  add("tensor parallel", std::to_string(c.tp), f.tp_from);
  add("pipeline parallel", std::to_string(c.pp), f.pp_from);
  add("ZeRO stage", std::to_string(c.zero), f.zero_from);
  add("recomputation", std::string(recomputeName(c.recompute)), f.recompute_from);
  add("micro-batch", fmt::format("{}, accumulation {}", c.micro_batch, c.accum), f.micro_from);
  return out;
}

}  // namespace gpudoctor
