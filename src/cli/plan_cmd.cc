// `gpudoctor plan`: what fits and what is fastest, before the job starts.
#include <memory>

#include "cli/commands.h"
#include "cli/json_output.h"
#include "cli/plan_args.h"
#include "cli/usage.h"
#include "planning/plan.h"
#include "report/plan_report.h"
#include "report/text.h"

namespace gpudoctor::cli {

Result<PlanInputs> planInputs(const PlanArgs& a) {
  ModelSpec m;
  if (!a.model.empty() && a.model != "custom") {
    auto p = modelPreset(a.model);
    if (!p.ok()) return p.error();
    m = p.value();
  } else {
    m.name = "custom";
    m.gated_mlp = true;
    m.tied_embeddings = false;
    m.learned_positions = false;
    m.biases = false;
  }
  if (a.layers) m.layers = a.layers;
  if (a.hidden) m.hidden = a.hidden;
  if (a.heads) m.heads = a.heads;
  m.kv_heads = a.kv_heads ? a.kv_heads : (a.heads ? a.heads : m.kv_heads);
  if (a.ffn) m.ffn = a.ffn;
  if (a.vocab) m.vocab = a.vocab;
  if (a.seq) m.seq = a.seq;
  if (m.ffn == 0 && m.hidden) m.ffn = 4 * m.hidden;
  if (Status s = validateModel(m); !s.ok()) return s.error();
  auto k = gpuPreset(a.gpu);
  if (!k.ok() && !(a.gpu_memory_gb > 0 && a.tflops > 0)) return k.error();
  ClusterSpec c = k.ok() ? k.value() : ClusterSpec{};
  if (!k.ok()) c.gpu = a.gpu;
  if (a.gpu_memory_gb > 0) c.memory_bytes = a.gpu_memory_gb * 1e9;
  if (a.tflops > 0) c.peak_tflops = a.tflops;
  if (a.efficiency > 0) c.efficiency = a.efficiency;
  if (a.intra_gbps > 0) c.intra_busbw_gbps = a.intra_gbps;
  if (a.inter_gbps > 0) c.inter_busbw_gbps = a.inter_gbps;
  c.gpus_per_node = a.gpus_per_node;
  c.nodes = a.nodes;
  TrainSpec t;
  if (a.global_batch_tokens > 0) {
    if (a.global_batch_tokens % m.seq) return Error{"--global-batch-tokens must be a multiple of the sequence length"};
    t.global_batch = a.global_batch_tokens / m.seq;
  } else {
    t.global_batch = a.global_batch > 0 ? a.global_batch : static_cast<int64_t>(c.gpus()) * 8;
  }
  if (a.precision == "bf16")
    t.precision = Precision::kBf16Mixed;
  else if (a.precision == "fp16")
    t.precision = Precision::kFp16Mixed;
  else if (a.precision == "fp32")
    t.precision = Precision::kFp32;
  else if (a.precision == "amp")
    t.precision = Precision::kAmp;
  else
    return Error{"--precision must be bf16, fp16, amp or fp32, not \"" + a.precision + "\""};
  if (a.optimizer != "adamw" && a.optimizer != "sgd") return Error{"--optimizer must be adamw or sgd"};
  t.optimizer = a.optimizer;
  t.flash_attention = !a.no_flash;
  t.fp32_grad_accumulation = a.fp32_grads;
  t.memory_threshold = a.memory_limit;
  SearchPins pins;
  pins.tp = a.tp;
  pins.pp = a.pp;
  pins.zero = a.zero;
  pins.micro_batch = a.micro_batch;
  if (!a.recompute.empty()) {
    if (a.recompute == "none")
      pins.recompute = 0;
    else if (a.recompute == "selective")
      pins.recompute = 1;
    else if (a.recompute == "full")
      pins.recompute = 2;
    else
      return Error{"--recompute must be none, selective or full"};
  }
  // Pinned degrees that can never work get a reason, not an empty table.
  if (a.tp > 0 && m.heads % a.tp)
    return Error{"--tp " + std::to_string(a.tp) + " does not divide the " + std::to_string(m.heads) +
                 " attention heads"};
  if (a.tp > c.gpus_per_node) return Error{"--tp is larger than the GPUs of a node"};
  if (a.pp > 0 && m.layers % a.pp)
    return Error{"--pp " + std::to_string(a.pp) + " does not divide the " + std::to_string(m.layers) + " layers"};
  if (a.tp > 0 && a.pp > 0 && c.gpus() % (a.tp * a.pp))
    return Error{"--tp x --pp does not divide the " + std::to_string(c.gpus()) + " GPUs"};
  return PlanInputs{m, c, t, pins};
}

namespace {

int runPlan(const PlanArgs& a) {
  auto in = planInputs(a);
  if (!in.ok()) return fail(in.message(), kUsage);  // plan's input errors are usage errors
  if (!a.from_trace.empty()) return runPlanFromTrace(a, std::move(in.value()));
  const auto& [m, c, t, pins] = in.value();
  auto plans = searchPlans(m, c, t, pins);
  if (plans.empty())
    return fail("no configuration is possible: the global batch " + std::to_string(t.global_batch) +
                    " must be a multiple of micro-batch x data-parallel degree (try a batch that is a multiple of the "
                    "GPU count)",
                kUsage);
  std::string json = a.json.empty() ? "" : renderPlanJson(m, c, t, plans, a.top);
  std::string text = jsonOnly(a.json) ? "" : fitLines(renderPlanText(m, c, t, plans, a.top));
  if (std::string err = writeOutputs(a.json, text, json); !err.empty()) return fail(err, kBadInput);
  return plans.front().fits ? kOk : kGateFailed;  // nothing fits: the table says what would
}

}  // namespace

std::function<int()> addPlan(CLI::App& app) {
  auto a = std::make_shared<PlanArgs>();
  auto* cmd = app.add_subcommand(
      "plan",
      "Memory per GPU and predicted step time for every training configuration (micro-batch, accumulation, "
      "recomputation, ZeRO stage, TP x PP x DP) of a transformer on a cluster; the best that fit, with "
      "Megatron / DeepSpeed / FSDP settings. Exit 1 when nothing fits (and says what would).");
  cmd->add_option("--model", a->model,
                  "Preset (gpt2..gpt2-xl, gpt3-125m..gpt3-175b, llama2-7b/13b/70b, llama3-8b/70b) or custom")
      ->capture_default_str();
  cmd->add_option("--layers", a->layers, "Override: transformer layers")->group("Model")->check(positive());
  cmd->add_option("--hidden", a->hidden, "Override: hidden size")->group("Model")->check(positive());
  cmd->add_option("--heads", a->heads, "Override: attention heads")->group("Model")->check(positive());
  cmd->add_option("--kv-heads", a->kv_heads, "Override: key/value heads (GQA)")->group("Model")->check(positive());
  cmd->add_option("--ffn", a->ffn, "Override: FFN size")->group("Model")->check(positive());
  cmd->add_option("--vocab", a->vocab, "Override: vocabulary")->group("Model")->check(positive());
  cmd->add_option("--seq", a->seq, "Override: sequence length")->group("Model")->check(positive());
  cmd->add_option("--gpu", a->gpu, "GPU: h200, h100, a100-80g, a100-40g, l40s, b200")
      ->capture_default_str()
      ->group("Cluster");
  cmd->add_option("--gpu-memory-gb", a->gpu_memory_gb, "GPU memory (GB, 1e9)")->group("Cluster")->check(positive());
  cmd->add_option("--tflops", a->tflops, "Measured or datasheet dense 16-bit TFLOP/s")
      ->group("Cluster")
      ->check(positive());
  cmd->add_option("--efficiency", a->efficiency, "Achieved fraction of peak (default 0.55)")
      ->group("Cluster")
      ->check(CLI::Range(0.01, 1.0).description("a fraction of peak from 0.01 to 1"));
  cmd->add_option("--gpus-per-node", a->gpus_per_node, "GPUs per node")
      ->capture_default_str()
      ->group("Cluster")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--nodes", a->nodes, "Nodes")->capture_default_str()->group("Cluster")->check(CLI::Range(1, 100000));
  cmd->add_option("--intra-gbps", a->intra_gbps, "Allreduce bus bandwidth inside a node, GB/s")
      ->group("Cluster")
      ->check(positive());
  cmd->add_option("--inter-gbps", a->inter_gbps, "Bus bandwidth per GPU across nodes, GB/s")
      ->group("Cluster")
      ->check(positive());
  cmd->add_option("--global-batch", a->global_batch, "Sequences per optimizer step (default 8 per GPU)")
      ->group("Training")
      ->check(positive());
  cmd->add_option("--global-batch-tokens", a->global_batch_tokens, "Tokens per optimizer step")
      ->group("Training")
      ->check(positive());
  cmd->add_option("--precision", a->precision,
                  "bf16 or fp16 (16-bit weights, fp32 master copy: Megatron/DeepSpeed), amp (PyTorch autocast: fp32 "
                  "weights, 16-bit compute) or fp32")
      ->capture_default_str()
      ->group("Training");
  cmd->add_option("--optimizer", a->optimizer, "adamw or sgd")->capture_default_str()->group("Training");
  cmd->add_flag("--no-flash", a->no_flash, "Attention stores its score matrices (no flash attention)")
      ->group("Training");
  cmd->add_flag("--fp32-grads", a->fp32_grads, "Accumulate gradients in fp32 (18 bytes/param with AdamW)")
      ->group("Training");
  cmd->add_option("--memory-limit", a->memory_limit, "Share of GPU memory a plan may use")
      ->capture_default_str()
      ->group("Training")
      ->check(CLI::Range(0.1, 1.0));
  cmd->add_option("--tp", a->tp, "Pin the tensor-parallel degree")->group("Pin")->check(CLI::Range(1, 1024));
  cmd->add_option("--pp", a->pp, "Pin the pipeline-parallel degree")->group("Pin")->check(CLI::Range(1, 1024));
  cmd->add_option("--zero", a->zero, "Pin the ZeRO stage (0-3)")->group("Pin")->check(CLI::Range(0, 3));
  cmd->add_option("--micro-batch", a->micro_batch, "Pin the micro-batch")->group("Pin")->check(positive());
  cmd->add_option("--recompute", a->recompute, "Pin recomputation: none, selective, full")->group("Pin");
  cmd->add_option("--top", a->top, "Configurations shown")->capture_default_str()->check(CLI::Range(1, 1000));
  addJsonOption(cmd, &a->json, "the plans");
  cmd->add_option("--config", a->config, "TOML file of the same settings (flag names, _ for -); flags win")
      ->type_name("FILE");
  cmd->add_option("--from-trace", a->from_trace,
                  "Compare the prediction with profiled traces of the job and explain the difference (kernel "
                  "efficiency, exposed communication, host overhead). The configuration is what the traces show "
                  "(GPU count, DDP/FSDP, accumulation, recomputation, autocast); flags pin any of it, and what "
                  "neither tells is printed as assumed")
      ->type_name("TRACE");
  return [a, cmd] {
    for (const CLI::Option* o : cmd->get_options())
      if (o->count() > 0) a->given.insert(o->get_name());
    if (!a->config.empty()) {
      Status s = applyPlanConfig(a->config, *a, *cmd);
      if (!s.ok()) return fail(s.message());  // a missing or wrong file: bad input
    }
    return runPlan(*a);
  };
}

}  // namespace gpudoctor::cli
