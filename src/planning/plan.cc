#include "planning/plan.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace gpudoctor {

std::string_view precisionName(Precision p) {
  switch (p) {
    case Precision::kFp32:
      return "fp32";
    case Precision::kBf16Mixed:
      return "bf16";
    case Precision::kFp16Mixed:
      return "fp16";
    case Precision::kAmp:
      return "amp";
  }
  return "bf16";
}

std::string_view recomputeName(Recompute r) {
  switch (r) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
  }
  return "none";
}

Result<ClusterSpec> gpuPreset(const std::string& name) {
  // Vendor datasheets (dense, without sparsity). Memory as the driver reports usable bytes ~ nominal.
  struct G {
    double mem, peak, fp32, hbm;
  };
  static const std::map<std::string, G> g = {
      {"h200", {141e9, 989, 67, 4800}},      {"h100", {80e9, 989, 67, 3350}},  {"a100-80g", {80e9, 312, 19.5, 2039}},
      {"a100-40g", {40e9, 312, 19.5, 1555}}, {"l40s", {48e9, 362, 91.6, 864}}, {"b200", {180e9, 2250, 80, 8000}}};
  auto it = g.find(name);
  if (it == g.end()) {
    std::string known;
    for (const auto& [k, _] : g) known += (known.empty() ? "" : ", ") + k;
    return Error{"unknown GPU \"" + name + "\" (known: " + known + "; or give --gpu-memory-gb and --tflops)"};
  }
  ClusterSpec c;
  c.gpu = name;
  c.memory_bytes = it->second.mem;
  c.peak_tflops = it->second.peak;
  c.fp32_tflops = it->second.fp32;
  c.hbm_gbps = it->second.hbm;
  if (name.rfind("a100", 0) == 0) c.intra_busbw_gbps = 230;  // NVLink 3
  if (name == "l40s") c.intra_busbw_gbps = 25;               // PCIe only
  return c;
}

namespace {
bool fp32Weights(const TrainSpec& t) { return t.precision == Precision::kFp32 || t.precision == Precision::kAmp; }
double paramBytes(const TrainSpec& t) { return fp32Weights(t) ? 4 : 2; }
double gradBytes(const TrainSpec& t) { return fp32Weights(t) || t.fp32_grad_accumulation ? 4 : 2; }
// Optimizer state bytes per parameter (ZeRO's K): AdamW keeps m and v (and fp32 master weights in
// mixed precision); SGD with momentum keeps one buffer (and the master weights).
double optimizerBytes(const TrainSpec& t) {
  bool mixed = !fp32Weights(t);  // fp32 master weights live in the optimizer
  if (t.optimizer == "sgd") return mixed ? 8 : 4;
  return mixed ? 12 : 8;
}
double actScale(const TrainSpec& t) { return t.precision == Precision::kFp32 ? 2.0 : 1.0; }
}  // namespace

double activationBytesPerLayer(const ModelSpec& m, const TrainSpec& t, const ParallelConfig& c) {
  // Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models" (2022),
  // 16-bit activations: s·b·h·(34 + 5·a·s/h) without parallelism; with tensor parallelism t and
  // sequence parallelism everything is divided by t; without sequence parallelism
  // s·b·h·(10 + 24/t + 5·a·s/(h·t)). The 5·a·s/h term is the attention score matrices: gone with
  // selective recomputation and with flash attention. Full recomputation keeps the layer input 2·s·b·h.
  double s = static_cast<double>(m.seq), b = static_cast<double>(c.micro_batch), h = static_cast<double>(m.hidden);
  double a = static_cast<double>(m.heads), tp = c.tp;
  double sbh = s * b * h;
  bool scores = !t.flash_attention && c.recompute == Recompute::kNone;
  double score_term = scores ? 5 * a * s / h : 0;
  double bytes;
  if (c.recompute == Recompute::kFull)
    bytes = 2 * sbh / (t.sequence_parallel ? tp : 1);
  else if (t.sequence_parallel || tp == 1)
    bytes = sbh * (34 + score_term) / tp;
  else
    bytes = sbh * (10 + 24 / tp + score_term / tp);
  return bytes * actScale(t);
}

ModelStates modelStatesPerGpu(double psi, const TrainSpec& t, int zero, int dp) {
  ModelStates s;
  s.params = psi * paramBytes(t) / (zero >= 3 ? dp : 1);
  s.grads = psi * gradBytes(t) / (zero >= 2 ? dp : 1);
  s.optimizer = psi * optimizerBytes(t) / (zero >= 1 ? dp : 1);
  return s;
}

MemoryBreakdown memoryPerGpu(const ModelSpec& m, const TrainSpec& t, const ParallelConfig& c) {
  MemoryBreakdown r;
  // Parameters held by one model-parallel rank (embeddings split across TP like the layers; PP
  // stages hold their share of layers: an even split is assumed).
  ModelStates st = modelStatesPerGpu(static_cast<double>(totalParams(m)) / (c.tp * c.pp), t, c.zero, c.dp);
  r.params = st.params;
  r.grads = st.grads;
  r.optimizer = st.optimizer;
  // 1F1B: the first stage keeps min(pp, accum) micro-batches of its L/pp layers in flight.
  double layers = static_cast<double>(m.layers) / c.pp;
  double in_flight = static_cast<double>(std::min<int64_t>(c.pp, c.accum));
  r.activations = activationBytesPerLayer(m, t, c) * layers * in_flight;
  if (c.recompute == Recompute::kFull) {
    // The backward recomputes one layer at a time and needs its full activations meanwhile.
    ParallelConfig one = c;
    one.recompute = Recompute::kNone;
    r.activations += activationBytesPerLayer(m, t, one);
  }
  // Logits at the loss, split over TP (vocab-parallel), on the last stage: 16-bit logits (2 bytes),
  // their fp32 copy (4), log-softmax's saved output (4) and its gradient (4) are alive together:
  // 14 bytes per element in mixed precision, 16 in fp32 (measured: PyTorch 2.11 cross_entropy on
  // .float() logits, H200; docs/plan_validation_measured_h200.jsonl).
  double logit_elems = static_cast<double>(m.seq * c.micro_batch * m.vocab) / c.tp;
  r.logits = logit_elems * (t.precision == Precision::kFp32 ? 16 : 14);
  // Buffers: DDP gradient buckets (2 x 25 MB), or ZeRO-3's gathered parameters of two layers
  // (the current one and the prefetched next).
  if (c.zero >= 3)
    r.buffers = 2.0 * static_cast<double>(layerParams(m)) / c.tp * paramBytes(t);
  else if (c.dp > 1)
    r.buffers = 50e6;
  r.framework = t.framework_bytes;
  // The caching allocator rounds and fragments: 5 % of the transient memory (stated assumption).
  r.allocator_headroom = 0.05 * (r.activations + r.logits + r.buffers);
  return r;
}

StepEstimate stepTime(const ModelSpec& m, const ClusterSpec& k, const TrainSpec& t, const ParallelConfig& c) {
  StepEstimate e;
  double tokens = static_cast<double>(t.global_batch * m.seq);
  double flops_token = trainFlopsPerToken(m);
  double attn_fwd = attentionForwardFlopsPerToken(m);
  // Recomputation repeats forward work: all of it (full: + 2N + 4·L·h·s per token) or the attention
  // part (selective). Flash attention's backward recomputes the scores too (already in its kernel time).
  double n_dense = (flops_token - 3 * attn_fwd) / 3;  // 2N per token
  if (c.recompute == Recompute::kFull)
    flops_token += n_dense + attn_fwd;
  else if (c.recompute == Recompute::kSelective)
    flops_token += attn_fwd;
  double peak = (t.precision == Precision::kFp32 ? k.fp32_tflops : k.peak_tflops) * 1e12;
  int gpus = c.tp * c.pp * c.dp;
  e.compute_s = tokens * flops_token / gpus / (peak * k.efficiency);
  e.bubble_s = e.compute_s * (c.pp - 1) / static_cast<double>(c.accum);
  // The optimizer step is memory-bound: AdamW reads params, grads, m, v (and fp32 master weights)
  // and writes them back, about 28 bytes per parameter in mixed precision (20 in fp32, fewer with
  // SGD), over the shard this GPU updates, at 80 % of HBM bandwidth.
  {
    double per_param = t.optimizer == "sgd" ? (fp32Weights(t) ? 16 : 20) : (fp32Weights(t) ? 24 : 28);
    double shard = static_cast<double>(totalParams(m)) / (c.tp * c.pp) / (c.zero >= 1 ? c.dp : 1);
    e.optimizer_s = shard * per_param / (0.8 * k.hbm_gbps * 1e9);
  }
  // Placement: TP innermost (inside a node), then DP, then PP. A group leaves the node when the
  // product of the inner degrees exceeds the GPUs per node.
  double dp_bw = (c.tp * c.dp <= k.gpus_per_node ? k.intra_busbw_gbps : k.inter_busbw_gbps) * 1e9;
  double pp_bw = (c.tp * c.dp * c.pp <= k.gpus_per_node ? k.intra_busbw_gbps : k.inter_busbw_gbps) * 1e9;
  double tp_bw = (c.tp <= k.gpus_per_node ? k.intra_busbw_gbps : k.inter_busbw_gbps) * 1e9;
  // Gradients (and ZeRO-3's parameters) on the wire, in the precision they are kept in.
  double psi_bytes = static_cast<double>(totalParams(m)) / (c.tp * c.pp) * gradBytes(t);
  double n = c.dp, frac = (n - 1) / n;
  if (c.dp > 1) {
    // Time of a collective of B bytes: allreduce B·2(n-1)/n / busbw, allgather/reduce-scatter
    // B·(n-1)/n / busbw (busbw as nccl-tests defines it).
    double per_step;
    if (c.zero <= 1)
      per_step = 2 * frac * psi_bytes;  // one allreduce per step (no_sync accumulation)
    else if (c.zero == 2)
      per_step = frac * psi_bytes * (static_cast<double>(c.accum) + 1);  // RS per micro-batch + AG
    else
      per_step = 3 * frac * psi_bytes * static_cast<double>(c.accum);  // AG fwd + AG bwd + RS, per micro-batch
    e.dp_comm_s = per_step / dp_bw;
    double backward = e.compute_s * 2.0 / 3.0;
    e.dp_exposed_s = std::max((1 - t.dp_overlap) * e.dp_comm_s, e.dp_comm_s - backward);
  }
  if (c.tp > 1) {
    // Four allreduce-equivalents per layer per micro-batch (two forward, two backward) of s·b·h
    // 16-bit values; full recomputation repeats the two forward ones. Not overlapped.
    double bytes = static_cast<double>(m.seq * c.micro_batch * m.hidden) * 2;
    double per = bytes * 2 * (c.tp - 1) / c.tp / tp_bw;
    double count = (c.recompute == Recompute::kFull ? 6 : 4) * static_cast<double>(m.layers) / c.pp;
    e.tp_comm_s = per * count * static_cast<double>(c.accum);
  }
  if (c.pp > 1) {
    double bytes = static_cast<double>(m.seq * c.micro_batch * m.hidden) * 2 / (t.sequence_parallel ? c.tp : 1);
    e.pp_comm_s = 2 * bytes / pp_bw * static_cast<double>(c.accum);
  }
  e.step_s = e.compute_s + e.optimizer_s + e.bubble_s + e.dp_exposed_s + e.tp_comm_s + e.pp_comm_s;
  e.tokens_per_s = tokens / e.step_s;
  e.mfu = tokens * trainFlopsPerToken(m) / (e.step_s * gpus * peak);
  return e;
}

Status validateConfig(const ModelSpec& m, const ClusterSpec& k, const TrainSpec& t, const ParallelConfig& c) {
  if (c.tp < 1 || c.pp < 1 || c.dp < 1) return Error{"parallel degrees must be at least 1"};
  if (c.tp * c.pp * c.dp != k.gpus())
    return Error{fmt::format("tp x pp x dp = {} x {} x {} = {} is not the {} GPUs", c.tp, c.pp, c.dp,
                             c.tp * c.pp * c.dp, k.gpus())};
  if (m.heads % c.tp) return Error{fmt::format("tp={} does not divide the {} attention heads", c.tp, m.heads)};
  if (c.tp > k.gpus_per_node)
    return Error{fmt::format("tp={} is larger than the {} GPUs of a node", c.tp, k.gpus_per_node)};
  if (m.layers % c.pp) return Error{fmt::format("pp={} does not divide the {} layers", c.pp, m.layers)};
  if (c.zero < 0 || c.zero > 3) return Error{"zero stage must be 0..3"};
  if (c.zero >= 2 && c.pp > 1) return Error{"ZeRO-2/3 do not combine with pipeline parallelism (DeepSpeed, Megatron)"};
  if (c.micro_batch < 1 || c.accum < 1) return Error{"micro-batch and accumulation must be at least 1"};
  if (c.micro_batch * c.accum * c.dp != t.global_batch)
    return Error{fmt::format("micro-batch {} x accumulation {} x dp {} is not the global batch {}", c.micro_batch,
                             c.accum, c.dp, t.global_batch)};
  return {};
}

std::vector<PlanResult> searchPlans(const ModelSpec& m, const ClusterSpec& k, const TrainSpec& t,
                                    const SearchPins& pins) {
  std::vector<PlanResult> out;
  int gpus = k.gpus();
  for (int tp = 1; tp <= k.gpus_per_node; tp *= 2) {
    if (pins.tp > 0 && tp != pins.tp) continue;
    for (int pp = 1; pp <= gpus / tp; ++pp) {
      if (pins.pp > 0 && pp != pins.pp) continue;
      if (gpus % (tp * pp)) continue;
      int dp = gpus / (tp * pp);
      for (int zero = 0; zero <= 3; ++zero) {
        if (pins.zero >= 0 && zero != pins.zero) continue;
        if (dp == 1 && zero > 0) continue;  // nothing to shard across
        for (int rc = 0; rc <= 2; ++rc) {
          if (pins.recompute >= 0 && rc != pins.recompute) continue;
          for (int64_t b = 1; b * dp <= t.global_batch; b *= 2) {
            if (pins.micro_batch > 0 && b != pins.micro_batch) continue;
            if (t.global_batch % (b * dp)) continue;
            ParallelConfig c{tp, pp, dp, zero, static_cast<Recompute>(rc), b, t.global_batch / (b * dp)};
            if (!validateConfig(m, k, t, c).ok()) continue;
            PlanResult r;
            r.cfg = c;
            r.mem = memoryPerGpu(m, t, c);
            r.time = stepTime(m, k, t, c);
            r.fits = r.mem.total() <= t.memory_threshold * k.memory_bytes;
            out.push_back(r);
          }
        }
      }
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const PlanResult& a, const PlanResult& b) {
    if (a.fits != b.fits) return a.fits;
    if (a.fits) return a.time.step_s < b.time.step_s;
    return a.mem.total() < b.mem.total();
  });
  return out;
}

}  // namespace gpudoctor
