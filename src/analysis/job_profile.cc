#include "analysis/job_profile.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

#include "analysis/job_profile_host.h"
#include "analysis/job_profile_names.h"
#include "analysis/run_analysis.h"

namespace gpudoctor {

// The profile reads the framework's own operator and range names (analysis/job_profile_names.h)
// in one walk over the host events (analysis/job_profile_host.h) and the GPU work from the index,
// then concludes each field from what they counted.
using namespace job_profile_detail;  // inside gpudoctor: only analysis/job_profile*.cc include those headers

namespace {
// nameFlags of each of the trace's interned strings, read once per string.
std::vector<uint32_t> stringFlags(const RankTrace& t) {
  std::vector<uint32_t> flags(t.strings.size());
  for (uint32_t id = 0; id < t.strings.size(); ++id) flags[id] = nameFlags(t.strings.view(id));
  return flags;
}

// GPU side: the time of the tensor-core eligible kernels inside the windows, by precision.
struct PrecisionTime {
  int64_t ns[kNotEligible] = {};
  int64_t eligible_ns = 0;
};

PrecisionTime precisionTime(const RankAnalysis& ra) {
  const RankTrace& t = *ra.trace;
  const TraceIndex& ix = ra.index;
  const auto& ev = t.events;
  PrecisionTime pt;
  std::map<std::pair<uint32_t, uint32_t>, Prec> prec_cache;
  size_t gw = 0;
  for (uint32_t i : ix.gpu_work) {
    const Event& e = ev[i];
    if (e.kind != EventKind::kKernel) continue;
    while (gw < ra.windows.size() && e.start_ns >= ra.windows[gw].end_ns) ++gw;
    if (gw >= ra.windows.size() || e.start_ns < ra.windows[gw].begin_ns) continue;
    KernelClass c = ix.class_of_event[i];
    if (!isGemm(c) && c != KernelClass::kAttentionFused && c != KernelClass::kAttentionUnfused) continue;
    uint32_t op_ev = e.external_id >= 0 ? ix.op_of.find(e.external_id) : IdMap::kNone;
    uint32_t dtype = op_ev == IdMap::kNone ? 0 : ev[op_ev].dtype;
    auto key = std::make_pair(e.name, dtype);
    auto it = prec_cache.find(key);
    if (it == prec_cache.end())
      it = prec_cache.emplace(key, precisionOf(t.strings.view(e.name), c, t.strings.view(dtype))).first;
    if (it->second == kNotEligible) continue;
    pt.ns[it->second] += e.dur_ns;
    pt.eligible_ns += e.dur_ns;
  }
  return pt;
}

// Framework: from its operators, else its kernels' names; what a source without operators cannot hold.
void setFramework(uint32_t seen, JobProfile& p) {
  if (seen & kPytorch) {
    p.framework = "pytorch";
    p.notes.push_back("framework version: not in the trace (Kineto records schemaVersion and CUDA versions only)");
  } else if (seen & (kAtenKernel | kXlaKernel)) {
    // A recording (gpudoctor record) has no framework operators: the kernels' names tell.
    p.framework = (seen & kAtenKernel) ? "pytorch" : "jax";
    p.notes.push_back(std::string("framework: from its kernels' names (") +
                      ((seen & kAtenKernel) ? "PyTorch's ATen kernels" : "XLA fusion kernels") +
                      "; no framework operators were recorded), version unknown");
  }
  if (!(seen & kPytorch)) {
    p.not_in_source = {"optimizer", "dataloader", "autocast", "grad_accumulation", "activation_checkpointing"};
    p.notes.push_back(
        "not in this source: the optimizer, the DataLoader, autocast, gradient accumulation and "
        "recomputation are read from framework operators, which a recording (gpudoctor record) or a "
        "GPU-only profile does not hold; a torch.profiler trace with CPU activities does");
  }
}

// Precision: the eligible kernel time's shares and the precision that covers most of it; autocast
// (GEMM operators re-dispatched), the grad scaler.
void setPrecision(const PrecisionTime& pt, int steps, const HostCounts& n, JobProfile& p) {
  PrecisionShares& s = p.precision_shares;
  s.eligible_ns = steps ? pt.eligible_ns / steps : pt.eligible_ns;
  if (pt.eligible_ns > 0) {
    double tot = static_cast<double>(pt.eligible_ns);
    s.fp32 = pt.ns[kFp32] / tot;
    s.tf32 = pt.ns[kTf32] / tot;
    s.bf16 = pt.ns[kBf16] / tot;
    s.fp16 = pt.ns[kFp16] / tot;
    s.fp8 = pt.ns[kFp8] / tot;
    s.unknown = pt.ns[kPrecUnknown] / tot;
    int64_t known = pt.eligible_ns - pt.ns[kPrecUnknown];
    if (2 * known < pt.eligible_ns) {
      p.notes.push_back(
          "precision: most GEMM/attention kernel time is of unknown precision (names silent, no record_shapes)");
    } else {
      int best = 0;
      for (int k = 1; k < kPrecUnknown; ++k)
        if (pt.ns[k] > pt.ns[best]) best = k;
      const int64_t low_bits = pt.ns[kBf16] + pt.ns[kFp16] + pt.ns[kFp8];
      if (10 * pt.ns[best] >= 9 * known) {
        p.precision = std::string(precName(best));
      } else if (10 * low_bits < known) {
        // FP32 and TF32 together, nothing in 16 bits: an FP32 job whose convolutions and RNNs cuDNN runs
        // in TF32 by default (torch.backends.cudnn.allow_tf32), or whose matmuls TF32 was allowed for.
        // Not mixed precision.
        p.precision = "fp32";
        p.notes.push_back(fmt::format(
            "precision: FP32 tensors; {:.0f} % of the GEMM and convolution time runs in TF32 (cuDNN's default for "
            "convolutions and RNNs; matmuls where torch.backends.cuda.matmul.allow_tf32 is set), {:.0f} % in FP32",
            100 * s.tf32, 100 * s.fp32));
      } else {
        p.precision = "mixed";
      }
    }
  } else {
    p.notes.push_back("precision: no GEMM, convolution or attention kernels in the steps");
  }
  // Older PyTorch records an operator's dispatcher layers as two nested events of one name, which
  // looks like autocast's re-dispatch: kernels that all run in FP32/TF32 say it was not autocast.
  const bool full_precision = p.precision == "fp32" || p.precision == "tf32";
  if (n.autocast_hits > 0 && full_precision) {
    p.autocast = false;
    p.notes.push_back("autocast: GEMM operators nest in their own name, but their kernels run in " + p.precision +
                      ": not autocast (older PyTorch records an operator's dispatch layers twice)");
  } else if (n.autocast_hits > 0) {
    p.autocast = true;
  } else if (n.gemm_ops > 0) {
    p.autocast = false;
  }

  p.grad_scaler = (n.seen & kScaler) != 0;
  p.group_norm = (n.seen & kGroupNorm) != 0;
}

// Accumulation: backward passes per optimizer step, parameter tensors per backward pass.
void setAccumulation(const HostCounts& n, double per_step, JobProfile& p) {
  p.backward_passes_per_step = n.backward_passes * per_step;
  if (n.backward_passes > 0)
    p.param_tensors = static_cast<double>(n.accumulate_grads) / static_cast<double>(n.backward_passes);
  p.optimizer_steps_per_step = n.optimizer_steps * per_step;
  if (n.backward_passes > 0 && n.optimizer_steps > 0) {
    if (n.backward_passes % n.optimizer_steps == 0)
      p.grad_accumulation_steps = static_cast<int>(n.backward_passes / n.optimizer_steps);
    else
      p.notes.push_back("gradient accumulation: " + std::to_string(n.backward_passes) + " backward passes over " +
                        std::to_string(n.optimizer_steps) + " optimizer steps");
  } else if (n.graph_launches > 0) {
    p.notes.push_back(
        "gradient accumulation, optimizer, recomputation: the step runs inside CUDA graphs, "
        "whose operators the trace does not show");
  } else if (n.backward_passes == 0) {
    p.notes.push_back("gradient accumulation: no backward pass (autograd nodes) in the steps");
  } else {
    p.notes.push_back("gradient accumulation: no Optimizer.step range in the steps");
  }
}

// Data parallelism: from the framework's names, else the gradient collectives' kinds, else the world size.
void setDataParallel(const RankTrace& t, const TraceIndex& ix, const std::vector<uint32_t>& flags, uint32_t seen,
                     JobProfile& p) {
  const auto& ev = t.events;
  uint32_t coll = 0;
  for (uint32_t i : ix.gpu_work) {
    const Event& e = ev[i];
    if (e.kind != EventKind::kKernel || !e.hasRole(kRoleCollective)) continue;
    uint32_t cf = 0;
    if (e.collective != 0 && e.collective <= t.collectives.size()) {
      const Collective& c = t.collectives[e.collective - 1];
      if (c.group_size == 1) continue;
      cf = flags[c.coll_name];
    }
    if (!(cf & (kAllReduce | kAllGather | kReduceScatter))) cf = flags[e.name];
    coll |= cf;
  }
  if (t.world_size > 0) p.ranks = t.world_size;
  if (seen & kFsdp) {
    p.data_parallel = "fsdp";
    p.data_parallel_basis = "FullyShardedDataParallel / FSDP:: names";
  } else if (seen & kZero) {
    p.data_parallel = "zero";
    p.data_parallel_basis = "DeepSpeed names";
  } else if (seen & kDdp) {
    p.data_parallel = "ddp";
    p.data_parallel_basis = "DistributedDataParallel names";
  } else if ((coll & kAllGather) && (coll & kReduceScatter)) {
    p.data_parallel = "fsdp";
    p.data_parallel_basis = "all-gather + reduce-scatter collectives (FSDP or ZeRO-3 pattern)";
  } else if (coll & kAllReduce) {
    p.data_parallel = "ddp";
    p.data_parallel_basis = "all-reduce collectives";
  } else if (coll == 0 && !(seen & (kAllReduce | kAllGather | kReduceScatter)) && t.world_size <= 1) {
    // Kineto writes distributedInfo whenever a process group exists: without it, one process.
    p.data_parallel = "none";
    p.data_parallel_basis = t.world_size == 1 ? "world size 1" : "no process group (distributedInfo), no collectives";
    p.ranks = 1;
  } else {
    p.notes.push_back("data parallelism: world size " + std::to_string(t.world_size) +
                      " but no gradient collectives in the steps");
  }
}

// Recomputation: activation checkpointing, and the share of the forward's GPU time it re-runs.
void setRecomputation(const HostCounts& n, JobProfile& p) {
  if (n.backward_passes > 0) {
    p.activation_checkpointing = n.recompute_nodes > 0 || (n.seen & kCheckpoint);
    if (*p.activation_checkpointing && n.forward_gpu_ns > 0 && n.recompute_nodes > 0)
      p.recompute_share = static_cast<double>(n.recompute_gpu_ns) / static_cast<double>(n.forward_gpu_ns);
    else if (!*p.activation_checkpointing)
      p.recompute_share = 0.0;
  } else if (n.seen & kCheckpoint) {
    p.activation_checkpointing = true;
  }
}

// Optimizer: the most frequent step's name, its implementation, its launches per step.
void setOptimizer(const HostCounts& n, double per_step, JobProfile& p) {
  if (!n.optimizer_names.empty()) {
    auto best = std::max_element(n.optimizer_names.begin(), n.optimizer_names.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
    p.optimizer = best->first;
    if (n.optimizer_names.size() > 1) {
      std::string others;
      for (const auto& [name, c] : n.optimizer_names)
        if (name != p.optimizer) others += (others.empty() ? "" : ", ") + name;
      p.notes.push_back("optimizer: also " + others);
    }
    if (n.fused_ops > 0)
      p.optimizer_impl = "fused";
    else if (n.foreach_ops > 0)
      p.optimizer_impl = "foreach";
    else if (n.loop_ops > 0)
      p.optimizer_impl = "loop";
    p.optimizer_launches_per_step = n.optimizer_launches * per_step;
  }
}

// Loader and input copies: the DataLoader's workers, pinned host-to-device copies.
void setLoader(const HostCounts& n, const StepBreakdown& tot, JobProfile& p) {
  p.dataloader = n.loaders > 0;
  if (n.loaders > 0) {
    p.loader_multiprocess = n.loaders_in_process < n.loaders;
    if (n.loaders_in_process == n.loaders)
      p.loader_workers = 0;
    else
      p.notes.push_back("DataLoader workers: more than 0, the number is not in the trace");
  }
  int64_t htod = tot.pinned_htod.bytes + tot.pageable_htod.bytes;
  if (htod > 0) p.pin_memory = tot.pinned_htod.bytes >= tot.pageable_htod.bytes;
}

// Host syncs: per step, by host time, largest first.
void setHostSyncs(const HostCounts& n, double per_step, JobProfile& p) {
  for (const auto& [k, a] : n.syncs) {
    HostSync h;
    std::tie(h.op, h.call, h.caller, h.copy) = k;
    h.count_per_step = a.count * per_step;
    h.host_ns_per_step = static_cast<double>(a.host_ns) * per_step;
    h.wait_ns_per_step = static_cast<double>(a.wait_ns) * per_step;
    p.host_syncs.push_back(std::move(h));
  }
  std::stable_sort(p.host_syncs.begin(), p.host_syncs.end(),
                   [](const HostSync& a, const HostSync& b) { return a.host_ns_per_step > b.host_ns_per_step; });
}

// CUDA graphs and their phase; training or inference. A trace that records a capture
// (BeginCapture / Instantiate) is a one-off: its launches are captured, not the loop it serves,
// whatever graph launch follows. Training shows a backward pass, an optimizer step, a grad scaler
// or backward work by name (a step captured whole leaves only its kernels' names); a trace of
// framework operators without any of them is inference.
void setGraphsAndMode(const HostCounts& n, JobProfile& p) {
  const bool capture = (n.seen & kGraphCapture) != 0;
  p.cuda_graphs = n.graph_launches_all > 0 || capture;
  p.graph_phase = capture ? "capture" : n.graph_launches_all > 0 ? "replay" : "";
  if (n.backward_passes > 0 || n.optimizer_steps > 0 || (n.seen & (kScaler | kBackward)))
    p.mode = "training";
  else if (n.seen & kPytorch)
    p.mode = "inference";
  if (capture)
    p.notes.push_back(
        "CUDA graphs: this trace records a graph capture (a one-off: its launches are captured, not replayed); "
        "profile the graph's replay to judge the loop it serves");
}
}  // namespace

JobProfile profileRank(const RankAnalysis& ra, CheckpointRegions* checkpoint, std::vector<CastSite>* casts) {
  JobProfile p;
  const int steps = static_cast<int>(ra.windows.size());
  p.steps = steps;
  const double per_step = steps > 0 ? 1.0 / steps : 0.0;
  const std::vector<uint32_t> flags = stringFlags(*ra.trace);
  const HostCounts n = walkHostEvents(ra, flags, checkpoint, casts);
  setFramework(n.seen, p);
  setPrecision(precisionTime(ra), steps, n, p);
  setAccumulation(n, per_step, p);
  setDataParallel(*ra.trace, ra.index, flags, n.seen, p);
  p.torch_compile = (n.seen & kCompile) != 0;
  setGraphsAndMode(n, p);
  setRecomputation(n, p);
  setOptimizer(n, per_step, p);
  setLoader(n, ra.total, p);
  setHostSyncs(n, per_step, p);
  p.sdpa_calls_per_step = static_cast<double>(n.sdpa_calls) * per_step;
  // A math-backend operator is counted only as one of the SDPA calls (one called directly, or under a
  // call that began before the steps, is not).
  p.sdpa_math_calls_per_step = static_cast<double>(std::min(n.sdpa_math_calls, n.sdpa_calls)) * per_step;
  return p;
}

namespace {
// The value most ranks give (the first rank's on a tie), and a note for each rank that differs.
template <class T, class Show>
T consensus(const std::vector<JobProfile>& ps, const std::vector<int>& ids, T JobProfile::*field, const char* what,
            Show show, std::vector<std::string>& notes) {
  std::vector<std::pair<T, int>> counts;
  for (const auto& p : ps) {
    auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == p.*field; });
    if (it == counts.end())
      counts.push_back({p.*field, 1});
    else
      ++it->second;
  }
  auto best =
      std::max_element(counts.begin(), counts.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  T v = best->first;
  if (counts.size() > 1) {
    std::string diff;
    int shown = 0;
    for (size_t r = 0; r < ps.size(); ++r)
      if (!(ps[r].*field == v) && shown++ < 8)
        diff += (diff.empty() ? "" : ", ") + std::string("rank ") + std::to_string(ids[r]) + " " + show(ps[r].*field);
    if (shown > 8) diff += ", ...";
    notes.push_back("ranks differ: " + std::string(what) + ": " + show(v) + " on most ranks; " + diff);
  }
  return v;
}

std::string showStr(const std::string& s) { return s.empty() ? "unknown" : s; }
std::string showBool(bool b) { return b ? "yes" : "no"; }
std::string showOptBool(const std::optional<bool>& b) { return b ? showBool(*b) : "unknown"; }
std::string showOptInt(const std::optional<int>& v) { return v ? std::to_string(*v) : "unknown"; }
}  // namespace

std::vector<std::pair<std::string, std::string>> jobFields(const JobProfile& p) {
  std::string loader = !p.dataloader            ? "no DataLoader"
                       : !p.loader_multiprocess ? "unknown"
                       : *p.loader_multiprocess ? "workers"
                                                : "0 (in process)";
  std::vector<std::pair<std::string, std::string>> f = {
      {"precision", showStr(p.precision)},
      {"grad_scaler", showBool(p.grad_scaler)},
      {"grad_accumulation_steps", showOptInt(p.grad_accumulation_steps)},
      {"data_parallel", showStr(p.data_parallel)},
      {"torch_compile", showBool(p.torch_compile)},
      {"cuda_graphs", showBool(p.cuda_graphs)},
      {"graph_phase", p.graph_phase.empty() ? "none" : p.graph_phase},
      {"mode", showStr(p.mode)},
      {"activation_checkpointing", showOptBool(p.activation_checkpointing)},
      {"optimizer", showStr(p.optimizer) + " " + showStr(p.optimizer_impl)},
      {"dataloader_workers", loader},
      {"pin_memory", showOptBool(p.pin_memory)}};
  std::string syncs;
  for (const auto& h : p.host_syncs)
    syncs +=
        (syncs.empty() ? "" : ", ") + (h.op.empty() ? h.call : h.op) + fmt::format(" {:.3g}/step", h.count_per_step);
  f.push_back({"host_syncs", syncs.empty() ? "none" : syncs});
  return f;
}

JobProfile mergeJobProfiles(const std::vector<JobProfile>& ps, const std::vector<int>& ids) {
  if (ps.empty()) return {};
  if (ps.size() == 1) return ps.front();
  JobProfile j;
  auto& n = j.notes;
  j.framework = consensus(ps, ids, &JobProfile::framework, "framework", showStr, n);
  j.framework_version = consensus(ps, ids, &JobProfile::framework_version, "framework version", showStr, n);
  j.precision = consensus(ps, ids, &JobProfile::precision, "precision", showStr, n);
  j.autocast = consensus(ps, ids, &JobProfile::autocast, "autocast", showOptBool, n);
  j.grad_scaler = consensus(ps, ids, &JobProfile::grad_scaler, "grad scaler", showBool, n);
  j.group_norm = consensus(ps, ids, &JobProfile::group_norm, "GroupNorm", showBool, n);
  j.grad_accumulation_steps =
      consensus(ps, ids, &JobProfile::grad_accumulation_steps, "gradient accumulation", showOptInt, n);
  j.data_parallel = consensus(ps, ids, &JobProfile::data_parallel, "data parallelism", showStr, n);
  j.torch_compile = consensus(ps, ids, &JobProfile::torch_compile, "torch.compile", showBool, n);
  j.cuda_graphs = consensus(ps, ids, &JobProfile::cuda_graphs, "CUDA graphs", showBool, n);
  j.graph_phase = consensus(ps, ids, &JobProfile::graph_phase, "CUDA graph phase", showStr, n);
  j.mode = consensus(ps, ids, &JobProfile::mode, "training or inference", showStr, n);
  j.activation_checkpointing =
      consensus(ps, ids, &JobProfile::activation_checkpointing, "activation checkpointing", showOptBool, n);
  j.optimizer = consensus(ps, ids, &JobProfile::optimizer, "optimizer", showStr, n);
  j.optimizer_impl = consensus(ps, ids, &JobProfile::optimizer_impl, "optimizer implementation", showStr, n);
  j.dataloader = consensus(ps, ids, &JobProfile::dataloader, "DataLoader", showBool, n);
  j.loader_workers = consensus(ps, ids, &JobProfile::loader_workers, "DataLoader workers", showOptInt, n);
  j.loader_multiprocess =
      consensus(ps, ids, &JobProfile::loader_multiprocess, "DataLoader worker processes", showOptBool, n);
  j.pin_memory = consensus(ps, ids, &JobProfile::pin_memory, "pinned host-to-device copies", showOptBool, n);
  for (const auto& p : ps)  // what any rank's source cannot hold, once each
    for (const auto& f : p.not_in_source)
      if (std::find(j.not_in_source.begin(), j.not_in_source.end(), f) == j.not_in_source.end())
        j.not_in_source.push_back(f);
  // Basis of the data parallelism: the first rank that has the consensus value.
  for (const auto& p : ps)
    if (p.data_parallel == j.data_parallel) {
      j.data_parallel_basis = p.data_parallel_basis;
      break;
    }
  // Per-rank notes (what could not be told) once each, in first-seen order.
  for (const auto& p : ps)
    for (const auto& x : p.notes)
      if (std::find(n.begin(), n.end(), x) == n.end()) n.push_back(x);
  // World size: the largest recorded, at least the ranks given.
  int world = static_cast<int>(ps.size());
  for (const auto& p : ps)
    if (p.ranks) world = std::max(world, *p.ranks);
  j.ranks = world;
  if (j.data_parallel.empty() && world > 1 &&
      std::none_of(ps.begin(), ps.end(), [](const auto& p) { return !p.data_parallel.empty(); }))
    n.push_back("data parallelism: " + std::to_string(world) + " ranks, no gradient collectives seen");
  // Per-step figures: means over ranks.
  const double k = 1.0 / static_cast<double>(ps.size());
  std::vector<double> shares;
  for (const auto& p : ps) {
    j.steps += p.steps;
    j.backward_passes_per_step += p.backward_passes_per_step * k;
    j.optimizer_steps_per_step += p.optimizer_steps_per_step * k;
    j.optimizer_launches_per_step += p.optimizer_launches_per_step * k;
    j.param_tensors += p.param_tensors * k;
    j.sdpa_calls_per_step += p.sdpa_calls_per_step * k;
    j.sdpa_math_calls_per_step += p.sdpa_math_calls_per_step * k;
    auto& s = j.precision_shares;
    const auto& q = p.precision_shares;
    s.fp32 += q.fp32 * k, s.tf32 += q.tf32 * k, s.bf16 += q.bf16 * k, s.fp16 += q.fp16 * k, s.fp8 += q.fp8 * k;
    s.unknown += q.unknown * k;
    s.eligible_ns += static_cast<int64_t>(std::llround(static_cast<double>(q.eligible_ns) * k));
    if (p.recompute_share) shares.push_back(*p.recompute_share);
    for (const auto& h : p.host_syncs) {
      auto it = std::find_if(j.host_syncs.begin(), j.host_syncs.end(), [&](const HostSync& x) {
        return x.op == h.op && x.call == h.call && x.caller == h.caller && x.copy == h.copy;
      });
      if (it == j.host_syncs.end()) {
        j.host_syncs.push_back(h);
        it = j.host_syncs.end() - 1;
        it->count_per_step = it->host_ns_per_step = it->wait_ns_per_step = 0;
      }
      it->count_per_step += h.count_per_step * k;
      it->host_ns_per_step += h.host_ns_per_step * k;
      it->wait_ns_per_step += h.wait_ns_per_step * k;
    }
  }
  // A sync that costs one rank much more host time than another (a rank waiting for the others).
  for (const auto& h : j.host_syncs) {
    double lo = 1e300, hi = -1;
    size_t lo_r = 0, hi_r = 0;
    for (size_t r = 0; r < ps.size(); ++r) {
      double v = 0;
      for (const auto& x : ps[r].host_syncs)
        if (x.op == h.op && x.call == h.call && x.caller == h.caller && x.copy == h.copy) v = x.host_ns_per_step;
      if (v < lo) lo = v, lo_r = r;
      if (v > hi) hi = v, hi_r = r;
    }
    if (hi - lo > 1e6 && hi > 2 * lo) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "%.2f ms/step on rank %d, %.2f ms/step on rank %d", hi / 1e6, ids[hi_r], lo / 1e6,
                    ids[lo_r]);
      n.push_back("ranks differ: host sync " + (h.op.empty() ? h.call : h.op) +
                  (h.caller.empty() ? "" : " in " + h.caller) + ": " + buf);
    }
  }
  if (!shares.empty()) {
    double sum = 0;
    for (double x : shares) sum += x;
    j.recompute_share = sum / static_cast<double>(shares.size());
  }
  std::stable_sort(j.host_syncs.begin(), j.host_syncs.end(),
                   [](const HostSync& a, const HostSync& b) { return a.host_ns_per_step > b.host_ns_per_step; });
  return j;
}

JobProfile profileJob(const RunAnalysis& run) {
  std::vector<JobProfile> ps;
  std::vector<int> ids;
  for (const auto& r : run.ranks) {
    ps.push_back(profileRank(r));
    ids.push_back(r.trace->rank);
  }
  return mergeJobProfiles(ps, ids);
}

}  // namespace gpudoctor
