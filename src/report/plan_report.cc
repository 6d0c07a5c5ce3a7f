#include "report/plan_report.h"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace gpudoctor {

namespace {
// A byte count the model holds in double, as the integer the JSON promises.
int64_t bytes(double b) { return std::llround(b); }
double gb(double b) { return b / 1e9; }
}  // namespace

std::vector<std::string> planSettings(const ModelSpec& m, const TrainSpec& t, const ParallelConfig& c) {
  std::vector<std::string> s;
  std::string rc =
      c.recompute == Recompute::kNone ? "" : fmt::format(" --recompute-granularity {}", recomputeName(c.recompute));
  if (c.recompute == Recompute::kFull) rc += " --recompute-method uniform --recompute-num-layers 1";
  s.push_back(
      fmt::format("Megatron: --tensor-model-parallel-size {} --pipeline-model-parallel-size {} "
                  "--micro-batch-size {} --global-batch-size {} --seq-length {} --{}{}{}{}",
                  c.tp, c.pp, c.micro_batch, t.global_batch, m.seq,
                  t.precision == Precision::kFp32        ? "fp32"
                  : t.precision == Precision::kFp16Mixed ? "fp16"
                                                         : "bf16",
                  c.tp > 1 && t.sequence_parallel ? " --sequence-parallel" : "", rc,
                  c.zero == 1 ? " --use-distributed-optimizer" : ""));
  if (c.tp == 1 && c.pp == 1) {
    static const char* kTorch[] = {"DDP(model)", "DDP(model) + ZeroRedundancyOptimizer(params, torch.optim.AdamW)",
                                   "FSDP(model, sharding_strategy=ShardingStrategy.SHARD_GRAD_OP)",
                                   "FSDP(model, sharding_strategy=ShardingStrategy.FULL_SHARD)"};
    s.push_back(
        fmt::format("PyTorch: {}; micro-batch {}, accumulate {} steps", kTorch[c.zero], c.micro_batch, c.accum));
  }
  s.push_back(
      fmt::format("DeepSpeed: {{\"train_micro_batch_size_per_gpu\": {}, \"gradient_accumulation_steps\": {}, "
                  "\"zero_optimization\": {{\"stage\": {}}}, \"{}\": {{\"enabled\": true}}}}",
                  c.micro_batch, c.accum, c.zero, t.precision == Precision::kFp16Mixed ? "fp16" : "bf16"));
  if (c.recompute != Recompute::kNone && c.tp == 1 && c.pp == 1)
    s.push_back("PyTorch: torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False) per transformer block" +
                std::string(c.recompute == Recompute::kSelective ? " (attention only, or flash attention)" : ""));
  return s;
}

namespace {

// What to pass to plan with the measured kernel efficiency `eff`: only a value --efficiency accepts;
// outside its range, why the comparison does not hold instead.
std::string efficiencyAdvice(double eff, double peak, double assumed) {
  std::string o = fmt::format(
      "\n  Kernel efficiency: the kernels ran at {:.0f}% of the {:.0f} TFLOP/s peak; the plan assumed {:.0f}%.\n",
      100 * eff, peak, 100 * assumed);
  double advised = std::round(eff * 100) / 100;
  if (eff > kMaxEfficiency)
    return o +
           "  The measured compute is faster than the GPU's peak allows for this model and batch: the model, batch or "
           "configuration given does not match the traced job. Check --model, --layers, --hidden, --seq, "
           "--global-batch, --micro-batch.\n";
  if (advised < kMinEfficiency)
    return o + fmt::format(
                   "  That is below the lowest efficiency plan accepts ({:.2f}): the model given is likely smaller "
                   "than the traced job's, or its kernels are too small to keep the GPU busy.\n",
                   kMinEfficiency);
  return o + fmt::format("  Pass --efficiency {:.2f} to plan with the measured rate.\n", advised);
}

}  // namespace

std::string renderPlanVsTrace(const ModelSpec& m, const ClusterSpec& k, const TrainSpec& t, const PlanResult& p,
                              const RunAnalysis& run, const TraceFit& fit) {
  double steps = 0, wall = 0, compute = 0, exposed = 0, idle = 0, copies = 0;
  for (const auto& r : run.ranks) {
    steps += static_cast<double>(r.steps.size());
    wall += r.total.wall_ns;
    compute += r.total.compute_ns;
    exposed += r.total.comm_exposed_ns;
    idle += r.total.idle_ns;
    copies += r.total.copy_exposed_ns;
  }
  auto per = [&](double ns) { return ns / std::max(1.0, steps) / 1e9; };
  const auto& c = p.cfg;
  const auto& e = p.time;
  // One profiled step is one micro-batch iteration of the training loop when accum > 1.
  double scale = 1.0 / static_cast<double>(c.accum);
  double pred_compute = (e.compute_s + e.optimizer_s) * scale,
         pred_comm = (e.dp_exposed_s + e.tp_comm_s + e.pp_comm_s) * scale;
  double pred_step = e.step_s * scale;
  double eff = per(compute) > 0 ? k.efficiency * e.compute_s * scale / per(compute) : 0;
  std::string o = fmt::format(
      "gpudoctor plan --from-trace: {} vs {} rank(s), {:.0f} profiled step(s)\n"
      "configuration: tp {} pp {} dp {} ZeRO-{} recompute {} micro-batch {} (accumulation {}: one profiled step = one "
      "micro-batch)\n",
      m.name, run.ranks.size(), steps, c.tp, c.pp, c.dp, c.zero, recomputeName(c.recompute), c.micro_batch, c.accum);
  o += "\n  setting            value              from\n";
  for (const auto& a : describeFit(fit, p, t, k))
    o += fmt::format("  {:<18} {:<18} {}\n", a.setting, a.value, a.source);
  o += fmt::format("  model              {} layers, hidden {}, {} heads, seq {}, vocab {} (flags; no trace says)\n",
                   m.layers, m.hidden, m.heads, m.seq, m.vocab);
  for (const auto& n : fit.notes) o += "  " + n + "\n";
  o += fmt::format("\n  {:<28} {:>12} {:>12} {:>12}\n", "per step", "predicted ms", "measured ms", "difference");
  auto row = [&](const char* what, double pr, double me) {
    o += fmt::format("  {:<28} {:>12.2f} {:>12.2f} {:>+12.2f}\n", what, 1e3 * pr, 1e3 * me, 1e3 * (me - pr));
  };
  row("step", pred_step, per(wall));
  row("GPU compute", pred_compute, per(compute));
  row("exposed communication", pred_comm, per(exposed));
  row("exposed copies", 0, per(copies));
  row("GPU idle (host, waits)", 0, per(idle));
  o += efficiencyAdvice(eff, t.precision == Precision::kFp32 ? k.fp32_tflops : k.peak_tflops, k.efficiency);
  if (per(idle) > 0.1 * per(wall))
    o += fmt::format(
        "  Host overhead: the GPU idled {:.2f} ms per step, which the plan does not model: see gpudoctor "
        "analyze for why.\n",
        1e3 * per(idle));
  if (per(exposed) > 2 * pred_comm + 1e-4)
    o +=
        "  Exposed communication is above the prediction: overlap, bus bandwidth or a straggler (gpudoctor analyze).\n";
  return o;
}

std::string renderPlanText(const ModelSpec& m, const ClusterSpec& k, const TrainSpec& t,
                           const std::vector<PlanResult>& plans, size_t top) {
  std::string o = fmt::format(
      "gpudoctor plan: {} ({:.2f} B parameters, seq {}), {} x {} GPUs of {:.0f} GB ({}), global batch {} "
      "sequences, {} {}\n",
      m.name.empty() ? "custom model" : m.name, totalParams(m) / 1e9, m.seq, k.nodes, k.gpus_per_node,
      gb(k.memory_bytes), k.gpu, t.global_batch, precisionName(t.precision), t.optimizer);
  o += fmt::format(
      "assumed: {:.0f}% of {:.0f} TFLOP/s peak, busbw {:.0f} GB/s in a node and {:.0f} GB/s across, "
      "{:.0f}% of data-parallel traffic hidden, memory limit {:.0f}%\n",
      100 * k.efficiency, t.precision == Precision::kFp32 ? k.fp32_tflops : k.peak_tflops, k.intra_busbw_gbps,
      k.inter_busbw_gbps, 100 * t.dp_overlap, 100 * t.memory_threshold);
  size_t fitting = 0;
  for (const auto& p : plans) fitting += p.fits;
  o += fmt::format("{} configurations evaluated, {} fit\n\n", plans.size(), fitting);
  if (fitting == 0) {
    if (plans.empty()) return o + "no configuration is possible with these degrees and this batch\n";
    const auto& c = plans.front();
    double need = c.mem.total(), have = t.memory_threshold * k.memory_bytes;
    o += fmt::format(
        "Nothing fits. Closest: tp {} pp {} dp {} ZeRO-{} recompute {} micro-batch {} needs {:.1f} GB "
        "per GPU, {:.1f} GB over the {:.1f} GB limit.\n",
        c.cfg.tp, c.cfg.pp, c.cfg.dp, c.cfg.zero, recomputeName(c.cfg.recompute), c.cfg.micro_batch, gb(need),
        gb(need - have), gb(have));
    double states = c.mem.params + c.mem.grads + c.mem.optimizer;
    o += fmt::format(
        "It would fit with about {:.0f}x the GPUs (model states {:.1f} GB shard with ZeRO-3/FSDP), or "
        "with GPUs of {:.0f} GB.\n",
        std::ceil(need / have), gb(states), std::ceil(gb(need / t.memory_threshold)));
    return o;
  }
  o += fmt::format("{:>3} {:>3} {:>4} {:>4} {:<9} {:>5} {:>5} {:>8} {:>8} {:>9} {:>10} {:>5}\n", "tp", "pp", "dp",
                   "ZeRO", "recompute", "mb", "accum", "mem GB", "step s", "exposed s", "tokens/s", "MFU");
  size_t n = 0;
  for (const auto& p : plans) {
    if (!p.fits || n == top) break;
    ++n;
    const auto& c = p.cfg;
    o += fmt::format("{:>3} {:>3} {:>4} {:>4} {:<9} {:>5} {:>5} {:>8.1f} {:>8.3f} {:>9.3f} {:>10.0f} {:>4.0f}%\n", c.tp,
                     c.pp, c.dp, c.zero, recomputeName(c.recompute), c.micro_batch, c.accum, gb(p.mem.total()),
                     p.time.step_s, p.time.dp_exposed_s + p.time.tp_comm_s + p.time.pp_comm_s + p.time.bubble_s,
                     p.time.tokens_per_s, 100 * p.time.mfu);
  }
  const auto& b = plans.front();
  o += fmt::format(
      "\nBest: memory per GPU {:.1f} GB = params {:.1f} + grads {:.1f} + optimizer {:.1f} + activations "
      "{:.1f} + logits {:.1f} + buffers {:.1f} + CUDA/NCCL {:.1f} + allocator {:.1f}\n",
      gb(b.mem.total()), gb(b.mem.params), gb(b.mem.grads), gb(b.mem.optimizer), gb(b.mem.activations),
      gb(b.mem.logits), gb(b.mem.buffers), gb(b.mem.framework), gb(b.mem.allocator_headroom));
  o += fmt::format(
      "      step {:.3f} s = compute {:.3f} + optimizer {:.3f} + pipeline bubble {:.3f} + exposed DP "
      "{:.3f} (of {:.3f}) + TP {:.3f} + PP {:.3f}\n",
      b.time.step_s, b.time.compute_s, b.time.optimizer_s, b.time.bubble_s, b.time.dp_exposed_s, b.time.dp_comm_s,
      b.time.tp_comm_s, b.time.pp_comm_s);
  for (const auto& s : planSettings(m, t, b.cfg)) o += "      " + s + "\n";
  return o;
}

std::string renderPlanJson(const ModelSpec& m, const ClusterSpec& k, const TrainSpec& t,
                           const std::vector<PlanResult>& plans, size_t top) {
  nlohmann::ordered_json j;
  j["tool"] = "gpudoctor plan";
  j["schema_version"] = 1;  // bumped when a field changes meaning or goes away
  j["model"] = {{"name", m.name},     {"params", totalParams(m)},
                {"layers", m.layers}, {"hidden", m.hidden},
                {"heads", m.heads},   {"kv_heads", m.kv_heads},
                {"ffn", m.ffn},       {"vocab", m.vocab},
                {"seq", m.seq},       {"train_flops_per_token", trainFlopsPerToken(m)}};
  j["cluster"] = {{"gpu", k.gpu},
                  {"memory_bytes", bytes(k.memory_bytes)},
                  {"peak_tflops", k.peak_tflops},
                  {"efficiency", k.efficiency},
                  {"gpus_per_node", k.gpus_per_node},
                  {"nodes", k.nodes},
                  {"intra_busbw_gbps", k.intra_busbw_gbps},
                  {"inter_busbw_gbps", k.inter_busbw_gbps}};
  j["training"] = {
      {"global_batch", t.global_batch},       {"precision", precisionName(t.precision)}, {"optimizer", t.optimizer},
      {"flash_attention", t.flash_attention}, {"memory_threshold", t.memory_threshold},  {"dp_overlap", t.dp_overlap}};
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  size_t n = 0;
  for (const auto& p : plans) {
    if (n++ == top) break;
    const auto& c = p.cfg;
    arr.push_back({{"fits", p.fits},
                   {"tp", c.tp},
                   {"pp", c.pp},
                   {"dp", c.dp},
                   {"zero", c.zero},
                   {"recompute", recomputeName(c.recompute)},
                   {"micro_batch", c.micro_batch},
                   {"accum", c.accum},
                   // Bytes as integers (the model computes them in double; JSON promises base units); the
                   // total is the parts' sum, exactly.
                   {"memory_bytes",
                    {{"total", bytes(p.mem.params) + bytes(p.mem.grads) + bytes(p.mem.optimizer) +
                                   bytes(p.mem.activations) + bytes(p.mem.logits) + bytes(p.mem.buffers) +
                                   bytes(p.mem.framework) + bytes(p.mem.allocator_headroom)},
                     {"params", bytes(p.mem.params)},
                     {"grads", bytes(p.mem.grads)},
                     {"optimizer", bytes(p.mem.optimizer)},
                     {"activations", bytes(p.mem.activations)},
                     {"logits", bytes(p.mem.logits)},
                     {"buffers", bytes(p.mem.buffers)},
                     {"framework", bytes(p.mem.framework)},
                     {"allocator_headroom", bytes(p.mem.allocator_headroom)}}},
                   {"time_s",
                    {{"step", p.time.step_s},
                     {"compute", p.time.compute_s},
                     {"optimizer", p.time.optimizer_s},
                     {"bubble", p.time.bubble_s},
                     {"dp_comm", p.time.dp_comm_s},
                     {"dp_exposed", p.time.dp_exposed_s},
                     {"tp_comm", p.time.tp_comm_s},
                     {"pp_comm", p.time.pp_comm_s}}},
                   {"tokens_per_s", p.time.tokens_per_s},
                   {"mfu", p.time.mfu},
                   {"settings", planSettings(m, t, c)}});
  }
  j["plans"] = arr;
  return j.dump(1) + "\n";
}

}  // namespace gpudoctor
