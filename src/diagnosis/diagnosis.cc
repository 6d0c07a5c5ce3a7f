#include "diagnosis/diagnosis.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "diagnosis/nccl_log_check.h"

namespace gpudoctor {

std::string_view severityName(Severity s) {
  switch (s) {
    case Severity::kCritical: return "critical";
    case Severity::kWarning: return "warning";
    case Severity::kInfo: return "info";
    case Severity::kOk: return "ok";
  }
  return "info";
}

std::string_view checkStatusName(CheckStatus s) {
  switch (s) {
    case CheckStatus::kPass: return "pass";
    case CheckStatus::kFail: return "fail";
    case CheckStatus::kUnknown: return "not measurable";
  }
  return "not measurable";
}

namespace {

double ms(double ns) { return ns / 1e6; }
double pct(double x) { return 100.0 * x; }

// Per-step means over all ranks and selected steps, in ns.
struct Means {
  double steps = 0;
  double wall = 0, busy = 0, compute = 0, comm = 0, exposed = 0, copies = 0, idle = 0;
  double idle_host = 0, idle_sync = 0, idle_dep = 0, idle_other = 0, idle_loader = 0;
  double idle_host_loader = 0, idle_sync_loader = 0;  // the loader's share of host / sync idle
  double loader = 0, optimizer = 0, sync = 0;
  double pageable_htod_ns = 0, pageable_htod_count = 0, pinned_htod_count = 0;
};

Means meansOf(const RunAnalysis& run) {
  Means m;
  for (const auto& r : run.ranks) {
    const auto& t = r.total;
    m.steps += static_cast<double>(r.steps.size());
    m.wall += t.wall_ns;
    m.busy += t.gpu_busy_ns;
    m.compute += t.compute_ns;
    m.comm += t.comm_ns;
    m.exposed += t.comm_exposed_ns;
    m.copies += t.copy_exposed_ns;
    m.idle += t.idle_ns;
    m.idle_host += t.idle_host_ns;
    m.idle_sync += t.idle_sync_ns;
    m.idle_dep += t.idle_dependency_ns;
    m.idle_other += t.idle_other_ns;
    m.idle_loader += t.idle_in_loader_ns;
    m.idle_host_loader += t.idle_host_in_loader_ns;
    m.idle_sync_loader += t.idle_sync_in_loader_ns;
    m.loader += t.dataloader_ns;
    m.optimizer += t.optimizer_ns;
    m.sync += t.sync_ns;
    m.pageable_htod_ns += t.pageable_htod.dur_ns;
    m.pageable_htod_count += t.pageable_htod.count;
    m.pinned_htod_count += t.pinned_htod.count;
  }
  double n = std::max(1.0, m.steps);
  for (double* x : {&m.wall, &m.busy, &m.compute, &m.comm, &m.exposed, &m.copies, &m.idle, &m.idle_host, &m.idle_sync,
                    &m.idle_dep, &m.idle_other, &m.idle_loader, &m.idle_host_loader, &m.idle_sync_loader, &m.loader, &m.optimizer, &m.sync, &m.pageable_htod_ns,
                    &m.pageable_htod_count, &m.pinned_htod_count})
    *x /= n;
  return m;
}

double classNs(const KernelSummary& k, KernelClass c) {
  for (const auto& x : k.classes)
    if (x.cls == c) return static_cast<double>(x.dur.total_ns);
  return 0;
}

bool anyString(const RunAnalysis& run, std::string_view needle) {
  for (const auto& r : run.ranks) {
    const auto& sp = r.trace->strings;
    for (uint32_t i = 0; i < sp.size(); ++i)
      if (sp.view(i).find(needle) != std::string_view::npos) return true;
  }
  return false;
}

// Hopper and Ampere datasheets: TF32 tensor cores run ~7-8x the FP32 SIMT rate, BF16 ~15x.
double tf32Speedup(const RunAnalysis& run) {
  const auto& d = run.ranks.front().trace->devices;
  if (!d.empty() && d.front().compute_major >= 8) return 7.0;
  return 2.0;  // unknown or older GPU: a cautious factor
}

class Rules {
 public:
  Rules(const RunAnalysis& run, const Thresholds& th, const DiagnosisInputs& in)
      : run_(run), th_(th), in_(in), m_(meansOf(run)) {
    total_steps_ = std::max(1.0, m_.steps);
  }

  Diagnosis run() {
    Diagnosis d;
    d.step_ms = ms(m_.wall);
    ranking(d);
    precision();
    attention();
    launchOverhead();
    optimizer();
    input();
    communication();
    memory();
    ncclSettings();
    ncclLog();
    profilerOverhead();
    // The primary bottleneck leads; the rest follow by estimated gain, then severity.
    std::stable_sort(f_.begin() + 1, f_.end(), [](const Finding& a, const Finding& b) {
      if (a.gain_ms_per_step != b.gain_ms_per_step) return a.gain_ms_per_step > b.gain_ms_per_step;
      return a.severity < b.severity;
    });
    d.findings = std::move(f_);
    checklist(d);
    return d;
  }

 private:
  double share(double ns) const { return m_.wall > 0 ? ns / m_.wall : 0; }
  double perStep(double total_ns) const { return total_ns / total_steps_; }

  Finding& add(std::string id, std::string title, double gain_ns, std::string basis) {
    Finding f;
    f.id = std::move(id);
    f.title = std::move(title);
    f.gain_ms_per_step = ms(gain_ns);
    f.gain_share = share(gain_ns);
    f.gain_basis = std::move(basis);
    f.severity = f.gain_share >= 0.10 ? Severity::kCritical
                 : f.gain_share >= th_.get("min_gain_share") ? Severity::kWarning
                                                              : Severity::kInfo;
    f_.push_back(std::move(f));
    return f_.back();
  }

  void ranking(Diagnosis& d) {
    // Each idle nanosecond in one category: the loader's share is taken from the cause it was
    // classified under (host or sync), so the ranking adds up to the step.
    double input = m_.idle_host_loader + m_.idle_sync_loader;
    double host = m_.idle_host - m_.idle_host_loader;
    double sync = m_.idle_sync - m_.idle_sync_loader;
    d.ranking = {
        {"compute", share(m_.compute), ms(m_.compute)},
        {"communication", share(m_.exposed), ms(m_.exposed)},
        {"host_launch", share(host), ms(host)},
        {"input", share(input), ms(input)},
        {"sync", share(sync), ms(sync)},
        {"copies", share(m_.copies), ms(m_.copies)},
        {"other_idle", share(m_.idle_dep + m_.idle_other), ms(m_.idle_dep + m_.idle_other)},
    };
    std::stable_sort(d.ranking.begin(), d.ranking.end(), [](const auto& a, const auto& b) { return a.share > b.share; });
    d.primary = d.ranking.front().category;
    std::string list;
    for (const auto& b : d.ranking) list += fmt::format("{}{} {:.1f}%", list.empty() ? "" : ", ", b.category, pct(b.share));
    static const std::map<std::string, std::string> kWhat = {
        {"compute", "the GPU spends most of the step computing: make the kernels cheaper (precision, fusion, attention)"},
        {"communication", "NCCL time that no computation hides dominates the step"},
        {"host_launch", "the GPU waits for the host to launch work (Python overhead, small kernels)"},
        {"input", "the GPU waits while the host fetches the next batch"},
        {"sync", "the GPU waits behind blocking host synchronizations (.item(), .cpu(), cudaStreamSynchronize)"},
        {"copies", "memory copies run with no kernel to hide them"},
        {"other_idle", "the GPU waits on cross-stream dependencies or idles at the end of steps"}};
    const auto& top = d.ranking.front();
    double gain = top.category == "compute" ? 0 : top.ms_per_step * 1e6;
    auto& f = add("bottleneck." + top.category, fmt::format("Primary bottleneck: {} ({:.1f}% of the step)", top.category,
                                                           pct(top.share)),
                  gain, top.category == "compute"
                            ? "not a removable wait: gains come from the compute findings below"
                            : "all of this category's time per step (upper bound: removing it entirely)");
    f.explanation = kWhat.at(top.category) + ". Ranking: " + list + ".";
    f.evidence = {{"step", ms(m_.wall), "ms/step"}, {top.category, top.ms_per_step, "ms/step"},
                  {"GPU busy", pct(share(m_.busy)), "%"}};
    // Compute is no wait to remove; other_idle has no single cause to fix (see the idle breakdown).
    if (top.category == "compute" || top.category == "other_idle") f.severity = Severity::kInfo;
    f.fix = fixesFor(top.category);
  }

  std::vector<std::string> fixesFor(const std::string& cat) {
    if (cat == "communication")
      return {"# overlap gradient allreduce with backward (DDP does by default; keep buckets moderate):",
              "model = DDP(model, bucket_cap_mb=25, gradient_as_bucket_view=True)",
              "# fewer allreduces per optimizer step with gradient accumulation:",
              "with model.no_sync(): loss.backward()   # on all but the last micro-batch"};
    if (cat == "host_launch")
      return {"model = torch.compile(model, mode=\"reduce-overhead\")   # fuses kernels, replays CUDA graphs",
              "# or raise the micro-batch so each kernel does more work per launch"};
    if (cat == "input")
      return {"DataLoader(ds, batch_size=B, num_workers=8, pin_memory=True,",
              "           persistent_workers=True, prefetch_factor=4)"};
    if (cat == "sync")
      return {"# keep values on the GPU; log every N steps instead of calling .item() each step:",
              "if step % 100 == 0: print(loss.item())"};
    if (cat == "copies")
      return {"DataLoader(..., pin_memory=True); x = x.cuda(non_blocking=True)"};
    return {};
  }

  void precision() {
    const auto& k = run_.kernels;
    double fp32 = classNs(k, KernelClass::kGemmFp32Simt), tf32 = classNs(k, KernelClass::kGemmTf32),
           fp16 = classNs(k, KernelClass::kGemmFp16), bf16 = classNs(k, KernelClass::kGemmBf16),
           fp8 = classNs(k, KernelClass::kGemmFp8), other = classNs(k, KernelClass::kGemmOther);
    double gemm = fp32 + tf32 + fp16 + bf16 + fp8 + other;
    if (gemm <= 0) return;
    double fp32_share = fp32 / gemm;
    if (fp32_share > th_.get("fp32_gemm_share_max")) {
      double speed = tf32Speedup(run_);
      double gain = perStep(fp32) * (1 - 1 / speed);
      auto& f = add("precision.fp32_gemm", fmt::format("{:.0f}% of GEMM time runs in FP32 without tensor cores", pct(fp32_share)),
                    gain, fmt::format("FP32 GEMM time x (1 - 1/{:.0f}): tensor-core TF32 runs about {:.0f}x the FP32 rate "
                                      "on this GPU generation (datasheet); bf16 more",
                                      speed, speed));
      f.evidence = {{"FP32 GEMM", ms(perStep(fp32)), "ms/step"}, {"GEMM total", ms(perStep(gemm)), "ms/step"},
                    {"FP32 share of GEMM", pct(fp32_share), "%"}, {"BF16 share", pct(bf16 / gemm), "%"},
                    {"FP16 share", pct(fp16 / gemm), "%"}};
      f.explanation = "Matrix multiplies run on CUDA cores in FP32. Mixed precision moves them to tensor cores.";
      const auto& devs = run_.ranks.front().trace->devices;
      bool ampere_or_newer = devs.empty() || devs.front().compute_major >= 8;
      if (ampere_or_newer)
        f.fix = {"with torch.autocast(\"cuda\", dtype=torch.bfloat16):   # around the forward pass and loss",
                 "    loss = model(x)",
                 "# or, keeping FP32 weights and activations: torch.backends.cuda.matmul.allow_tf32 = True"};
      else  // no bf16 or TF32 tensor cores before Ampere: fp16 with loss scaling
        f.fix = {"scaler = torch.amp.GradScaler(\"cuda\")",
                 "with torch.autocast(\"cuda\", dtype=torch.float16): loss = model(x)",
                 "scaler.scale(loss).backward(); scaler.step(opt); scaler.update()"};
    }
    if (fp16 / gemm > 0.05) {
      auto& f = add("precision.fp16_gradscaler", "FP16 GEMMs: loss scaling is required (or use bf16, which needs none)", 0,
                    "no time gain; numerical safety");
      f.severity = Severity::kInfo;
      f.evidence = {{"FP16 share of GEMM", pct(fp16 / gemm), "%"}};
      f.explanation = "FP16 has a narrow exponent range; gradients underflow without a loss scale. BF16 has FP32's range.";
      f.fix = {"scaler = torch.amp.GradScaler(\"cuda\", init_scale=2.**16, growth_factor=2.0, backoff_factor=0.5, "
               "growth_interval=2000)",
               "scaler.scale(loss).backward(); scaler.step(opt); scaler.update()",
               "# or: torch.autocast(\"cuda\", dtype=torch.bfloat16) and drop the scaler"};
    }
  }

  void attention() {
    double unfused = classNs(run_.kernels, KernelClass::kAttentionUnfused);
    double fused = classNs(run_.kernels, KernelClass::kAttentionFused);
    if (unfused <= 0) return;
    double gain = perStep(unfused) * 0.75;
    auto& f = add("attention.materialized",
                  "Attention is materialized (batched GEMM + softmax + batched GEMM) instead of a fused kernel", gain,
                  "75% of the materialized-attention kernel time: fused (flash) attention is 2-4x faster (guide), "
                  "and it never writes the score matrix");
    f.evidence = {{"materialized attention", ms(perStep(unfused)), "ms/step"},
                  {"fused attention", ms(perStep(fused)), "ms/step"},
                  {"share of kernel time", pct(unfused / std::max(1.0, static_cast<double>(run_.kernels.total_ns))), "%"}};
    f.explanation = "bmm/softmax kernels launched by hand-written attention hold the full score matrix in memory.";
    f.fix = {"out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)",
             "# decoder (causal) attention: is_causal=True instead of a mask"};
  }

  void launchOverhead() {
    const auto& nn = run_.kernels.non_nccl;
    double kernels_per_step = nn.count / total_steps_;
    double median_us = static_cast<double>(nn.p50_ns) / 1e3;
    double launch_idle = m_.idle_host - m_.idle_host_loader;  // not the time spent waiting for data
    double host = share(launch_idle);
    if (nn.count == 0) return;
    if (median_us >= th_.get("short_kernel_us") || host <= th_.get("host_idle_max")) return;
    auto& f = add("launch.overhead",
                  fmt::format("Launch-bound: {:.0f} kernels per step with a median of {:.1f} us; the GPU waits for "
                              "launches {:.0f}% of the step",
                              kernels_per_step, median_us, pct(host)),
                  launch_idle, "GPU idle time waiting for the host to launch (upper bound)");
    f.evidence = {{"kernels", kernels_per_step, "per step"}, {"median kernel", median_us, "us"},
                  {"idle: host launch", ms(launch_idle), "ms/step"}};
    f.explanation = "Each kernel costs a few microseconds of host time to launch; when kernels are shorter than "
                    "that, the GPU starves. Fusing kernels or replaying CUDA graphs removes the launches.";
    f.fix = {"model = torch.compile(model, mode=\"reduce-overhead\")   # kernel fusion + CUDA graphs",
             "# or capture the step yourself: g = torch.cuda.CUDAGraph(); with torch.cuda.graph(g): ...",
             "# and/or raise the micro-batch size so each kernel does more work"};
  }

  void optimizer() {
    double opt_kernels = classNs(run_.kernels, KernelClass::kOptimizer);
    if (opt_kernels <= 0 || run_.kernels.fused_optimizer) return;
    // Host time of the optimizer step bounds what a single fused kernel can save.
    double gain = m_.optimizer > 0 ? std::max(0.0, m_.optimizer - perStep(opt_kernels) / 2) : perStep(opt_kernels) / 2;
    auto& f = add("optimizer.unfused", "The optimizer runs unfused (foreach / per-parameter kernels)", gain,
                  "optimizer step host time minus half its kernel time: a fused optimizer is one launch per "
                  "parameter group");
    f.evidence = {{"optimizer step (host)", ms(m_.optimizer), "ms/step"},
                  {"optimizer kernels", ms(perStep(opt_kernels)), "ms/step"}};
    f.explanation = "Fused AdamW/Adam/SGD update all parameters in a few kernels instead of several per tensor.";
    f.fix = {"opt = torch.optim.AdamW(model.parameters(), lr=lr, fused=True)"};
  }

  void input() {
    bool single = anyString(run_, "_SingleProcessDataLoaderIter");
    double loader_share = share(m_.idle_loader);
    if (loader_share > th_.get("io_wait_max") || (single && m_.idle_loader > 0)) {
      auto& f = add("input.loader_on_critical_path",
                    fmt::format("The GPU idles {:.1f}% of the step while the host fetches data{}", pct(loader_share),
                                single ? " in the training process (num_workers=0)" : ""),
                    m_.idle_loader, "GPU idle time while inside DataLoader __next__ (upper bound)");
      f.evidence = {{"DataLoader next()", ms(m_.loader), "ms/step"}, {"GPU idle meanwhile", ms(m_.idle_loader), "ms/step"},
                    {"IO wait share", pct(loader_share), "%"}};
      f.explanation = single ? "Samples are loaded in the training process, so the GPU waits for each batch."
                             : "The loader does not keep up: batches are not ready when the GPU needs them.";
      f.fix = fixesFor("input");
    } else if (single && m_.loader > 0 && m_.busy > 0) {
      // Loading in the training process, hidden now: say when it stops being hidden. (With worker
      // processes the trace shows only the main process's wait, not the workers' production rate.)
      double x = m_.busy / std::max(1.0, m_.loader);
      auto& f = add("input.loader_hidden",
                    fmt::format("The DataLoader ({:.2f} ms/step on the host) is hidden behind GPU work", ms(m_.loader)), 0,
                    "no gain now");
      f.severity = Severity::kOk;
      f.evidence = {{"DataLoader next()", ms(m_.loader), "ms/step"}, {"GPU busy", ms(m_.busy), "ms/step"}};
      f.explanation = fmt::format(
          "It becomes the bottleneck once GPU work per step falls below {:.2f} ms ({:.1f}x faster than now).",
          ms(m_.loader), x);
    }
    if (m_.pageable_htod_count > 0) {
      auto& f = add("input.pageable_copies",
                    fmt::format("{:.0f} host-to-device copies per step come from pageable memory", m_.pageable_htod_count),
                    m_.pageable_htod_ns, "time of pageable host-to-device copies (upper bound)");
      f.evidence = {{"pageable HtoD copies", m_.pageable_htod_count, "per step"},
                    {"pinned HtoD copies", m_.pinned_htod_count, "per step"},
                    {"pageable copy time", ms(m_.pageable_htod_ns), "ms/step"}};
      f.explanation = "Copies from pageable memory are staged and synchronous; pinned memory copies run async.";
      f.fix = {"DataLoader(..., pin_memory=True)", "x = x.cuda(non_blocking=True)"};
    }
  }

  void communication() {
    double exposed = share(m_.exposed);
    if (exposed > th_.get("comm_share_max")) {
      auto& f = add("communication.exposed",
                    fmt::format("Exposed communication is {:.1f}% of the step (guide: < {:.0f}%)", pct(exposed),
                                pct(th_.get("comm_share_max"))),
                    m_.exposed, "exposed NCCL time per step (upper bound: perfect overlap)");
      f.evidence = {{"NCCL", ms(m_.comm), "ms/step"}, {"overlapped", ms(m_.comm - m_.exposed), "ms/step"},
                    {"exposed", ms(m_.exposed), "ms/step"}};
      f.explanation = "NCCL kernels run while no compute kernel does. NCCL time also includes waiting for the "
                      "slowest rank: see the straggler finding before tuning NCCL.";
      f.fix = fixesFor("communication");
    }
    const auto& s = run_.straggler;
    if (s.matched && s.straggler >= 0 && s.straggler_share >= th_.get("straggler_share_min")) {
      double wait = static_cast<double>(s.others_wait_ns) / std::max(1.0, total_steps_ / run_.ranks.size());
      const RankAnalysis* sr = nullptr;
      for (const auto& r : run_.ranks)
        if (r.trace->rank == s.straggler) sr = &r;
      auto& f = add("communication.straggler",
                    fmt::format("Rank {} is a straggler: it reaches {:.0f}% of collectives last", s.straggler,
                                pct(s.straggler_share)),
                    wait, "mean time per step the other ranks wait inside NCCL for it (upper bound)");
      f.evidence = {{"arrives last", pct(s.straggler_share), "% of collectives"},
                    {"others wait", ms(wait), "ms/step"}};
      if (sr) {
        double n = std::max<double>(1, sr->steps.size());
        f.evidence.push_back({fmt::format("rank {} GPU idle (host launch)", s.straggler), ms(sr->total.idle_host_ns / n), "ms/step"});
        f.evidence.push_back({fmt::format("rank {} DataLoader", s.straggler), ms(sr->total.dataloader_ns / n), "ms/step"});
      }
      f.explanation = "Every other rank waits in its collectives for this one; its own step is slower before the "
                      "collective (host, loader, GPU or thermal). Compare its figures with the others'.";
      f.fix = {"gpudoctor analyze --rank " + std::to_string(s.straggler) + " TRACES   # its step, host side and idle causes",
               "nvidia-smi -q -d PERFORMANCE,CLOCK   # on its node: throttling, clocks"};
    }
    double small_per_step = 0, small_bytes = th_.get("small_collective_bytes");
    for (const auto& c : run_.collectives)
      if (c.bytes > 0 && static_cast<double>(c.bytes) < small_bytes) small_per_step += static_cast<double>(c.dur.count);
    small_per_step /= total_steps_;
    if (small_per_step > th_.get("small_collectives_per_step_max")) {
      auto& f = add("communication.small_collectives",
                    fmt::format("{:.0f} collectives per step are smaller than {:.0f} KiB", small_per_step, small_bytes / 1024),
                    0, "not estimated: latency-bound collectives cost a fixed time each");
      f.severity = Severity::kWarning;
      f.evidence = {{"small collectives", small_per_step, "per step"}};
      f.explanation = "Small collectives are latency-bound; fewer, larger buckets move the same bytes faster.";
      f.fix = {"model = DDP(model, bucket_cap_mb=50)   # fewer, larger gradient buckets"};
    }
  }

  void memory() {
    for (const auto& r : run_.ranks) {
      const auto* t = r.trace;
      if (t->peak_allocated_bytes < 0 || t->devices.empty()) continue;
      const DeviceProps* dev = &t->devices.front();
      for (const auto& d : t->devices)
        if (d.id == t->peak_device) dev = &d;
      if (dev->total_global_mem <= 0) continue;
      double frac = static_cast<double>(t->peak_allocated_bytes) / static_cast<double>(dev->total_global_mem);
      if (frac <= th_.get("gpu_memory_max")) continue;
      auto& f = add("memory.peak", fmt::format("Rank {} peaks at {:.0f}% of GPU memory", t->rank, pct(frac)), 0,
                    "no time gain; out-of-memory risk");
      f.severity = Severity::kCritical;
      f.evidence = {{"peak allocated", static_cast<double>(t->peak_allocated_bytes) / (1 << 30), "GiB"},
                    {"device memory", static_cast<double>(dev->total_global_mem) / (1 << 30), "GiB"}};
      f.explanation = "Above the guide's 95% the allocator fragments and a longer sequence runs out of memory.";
      f.fix = {"x = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)   # recompute activations",
               "# or halve the micro-batch and accumulate gradients over 2 steps"};
      return;
    }
  }

  void ncclSettings() {
    if (!in_.nccl_env) return;
    int ignored = 0, wrong = 0, slow = 0;
    std::vector<std::string> fixes;
    for (const auto& f : *in_.nccl_env) {
      if (f.verdict == EnvVerdict::kIgnored) ++ignored;
      else if (f.verdict == EnvVerdict::kWrong) ++wrong;
      else if (f.verdict == EnvVerdict::kSlow) ++slow;
      else continue;
      fixes.push_back(fmt::format("{}={}  ->  {} ({})", f.name, f.value, f.fix.empty() ? "see gpudoctor nccl env" : f.fix,
                                  envVerdictName(f.verdict)));
    }
    if (ignored + wrong + slow == 0) return;
    auto& f = add("nccl.settings",
                  fmt::format("NCCL settings: {} ignored by NCCL, {} wrong, {} slow", ignored, wrong, slow), 0,
                  "not estimated: measure with nccl-tests or gpudoctor before and after");
    f.severity = slow + wrong > 0 ? Severity::kWarning : Severity::kInfo;
    f.evidence = {{"ignored", static_cast<double>(ignored), "settings"}, {"wrong", static_cast<double>(wrong), "settings"},
                  {"slow", static_cast<double>(slow), "settings"}};
    f.explanation = "Settings NCCL silently ignores do nothing; wrong or slow ones change its choices for the worse.";
    f.fix = std::move(fixes);
  }

  // The communication setup the NCCL INFO logs reveal (sockets between nodes, GDR off, P2P unused,
  // few channels, NCCL warnings), one finding each; their cost is not in the trace, so no gain.
  void ncclLog() {
    if (!in_.nccl_log) return;
    for (const auto& l : *in_.nccl_log) {
      auto& f = add("nccl.log", l.title, 0, "not estimated from the trace: measure with gpudoctor nccl bench");
      f.severity = l.severity;
      f.explanation = l.evidence;
      if (!l.fix.empty()) f.fix = {l.fix};
    }
  }

  void profilerOverhead() {
    bool shapes = false, stack = false, memory = false;
    for (const auto& r : run_.ranks) {
      memory |= r.trace->peak_allocated_bytes >= 0;
      for (const auto& e : r.trace->events) {
        shapes |= e.kind == EventKind::kCpuOp && e.aux != 0;
        stack |= e.kind == EventKind::kPythonFunction;
        if (shapes && stack) break;
      }
    }
    if (!shapes && !stack && !memory) return;
    std::string opts;
    if (shapes) opts += "record_shapes=True ";
    if (stack) opts += "with_stack=True ";
    if (memory) opts += "profile_memory=True ";
    auto& f = add("profiler.overhead", "Profiler options add host overhead: " + opts, 0,
                  "no gain in production; host-side figures here are upper bounds");
    f.severity = Severity::kInfo;
    f.explanation = "These options record extra data for every operator, so host time (and host-bound idle) in "
                    "this trace is longer than without the profiler. record_shapes lets gpudoctor tell BF16 from FP16.";
    f.fix = {"torch.profiler.profile(activities=[CPU, CUDA], record_shapes=True,",
             "                       with_stack=False, profile_memory=False)"};
  }

  CheckStatus byFinding(const Diagnosis& d, std::string_view id, bool measurable) {
    if (!measurable) return CheckStatus::kUnknown;
    for (const auto& f : d.findings)
      if (f.id == id && f.severity != Severity::kOk && f.severity != Severity::kInfo) return CheckStatus::kFail;
    return CheckStatus::kPass;
  }

  void checklist(Diagnosis& d) {
    const auto& k = run_.kernels;
    double gemm = 0;
    for (auto c : {KernelClass::kGemmFp32Simt, KernelClass::kGemmTf32, KernelClass::kGemmFp16, KernelClass::kGemmBf16,
                   KernelClass::kGemmFp8, KernelClass::kGemmOther})
      gemm += classNs(k, c);
    double attn = classNs(k, KernelClass::kAttentionFused) + classNs(k, KernelClass::kAttentionUnfused);
    bool multi = run_.ranks.size() > 1;
    auto item = [&](std::string area, std::string what, CheckStatus s, std::string ev) {
      d.checklist.push_back({std::move(area), std::move(what), s, std::move(ev)});
    };
    item("compute", fmt::format("GPU utilization > {:.0f}%", pct(th_.get("gpu_util_min"))), share(m_.busy) >= th_.get("gpu_util_min") ? CheckStatus::kPass : CheckStatus::kFail,
         fmt::format("GPU busy {:.1f}% of the step", pct(share(m_.busy))));
    item("compute", "Mixed precision for matrix multiplies", byFinding(d, "precision.fp32_gemm", gemm > 0),
         gemm > 0 ? fmt::format("FP32 SIMT share of GEMM time {:.0f}%", pct(classNs(k, KernelClass::kGemmFp32Simt) / gemm))
                  : "no GEMM kernels in the trace");
    item("compute", "Fused (flash) attention", byFinding(d, "attention.materialized", attn > 0),
         attn > 0 ? fmt::format("materialized {:.2f} ms/step, fused {:.2f} ms/step",
                                ms(perStep(classNs(k, KernelClass::kAttentionUnfused))),
                                ms(perStep(classNs(k, KernelClass::kAttentionFused))))
                  : "no attention kernels recognized");
    item("compute", "Kernel fusion / launch overhead under control", byFinding(d, "launch.overhead", k.non_nccl.count > 0),
         fmt::format("median kernel {:.1f} us, GPU waiting on launches {:.1f}% of the step",
                     static_cast<double>(k.non_nccl.p50_ns) / 1e3, pct(share(m_.idle_host))));
    item("compute", "Fused optimizer", byFinding(d, "optimizer.unfused", classNs(k, KernelClass::kOptimizer) > 0),
         k.fused_optimizer ? "fused optimizer kernels seen" : "optimizer kernels are foreach/per-tensor");
    item("communication", fmt::format("Exposed communication < {:.0f}% of the step", pct(th_.get("comm_share_max"))),
         multi || m_.comm > 0 ? (share(m_.exposed) <= th_.get("comm_share_max") ? CheckStatus::kPass : CheckStatus::kFail)
                              : CheckStatus::kUnknown,
         fmt::format("exposed NCCL {:.1f}% of the step", pct(share(m_.exposed))));
    item("communication", "No straggler rank", multi && run_.straggler.matched ? byFinding(d, "communication.straggler", true)
                                                                                : CheckStatus::kUnknown,
         run_.straggler.note);
    {
      CheckStatus st = CheckStatus::kUnknown;
      std::string ev = "pass --nccl-env FILE (or run gpudoctor nccl env) to check the job's NCCL settings";
      if (in_.nccl_env) {
        st = byFinding(d, "nccl.settings", true);
        ev = fmt::format("{} settings checked", in_.nccl_env->size());
      }
      item("communication", "NCCL settings valid for this NCCL and host", st, ev);
    }
    {
      CheckStatus st = CheckStatus::kUnknown;
      std::string ev = "pass --nccl-log FILE... (NCCL_DEBUG=INFO) to check transports and channels";
      if (in_.nccl_log) {
        int bad = 0;
        for (const auto& l : *in_.nccl_log) bad += l.severity != Severity::kInfo;
        st = bad ? CheckStatus::kFail : CheckStatus::kPass;
        ev = bad ? fmt::format("{} problem(s) in the NCCL log", bad) : "NCCL log: transports and channels as expected";
      }
      item("communication", "NCCL transports as expected (IB/NVLink, GDR, channels)", st, ev);
    }
    item("communication", "Collectives large enough (bucketing)", byFinding(d, "communication.small_collectives", m_.comm > 0),
         fmt::format("{} collective groups in the trace", run_.collectives.size()));
    item("io", fmt::format("IO wait < {:.0f}% (loader off the critical path)", pct(th_.get("io_wait_max"))), byFinding(d, "input.loader_on_critical_path", m_.loader > 0),
         fmt::format("GPU idle while loading {:.1f}% of the step", pct(share(m_.idle_loader))));
    item("io", "DataLoader workers (num_workers > 0)",
         m_.loader > 0 ? (anyString(run_, "_SingleProcessDataLoaderIter") ? CheckStatus::kFail : CheckStatus::kPass)
                       : CheckStatus::kUnknown,
         m_.loader > 0 ? (anyString(run_, "_SingleProcessDataLoaderIter") ? "single-process loader" : "multi-process loader")
                       : "no DataLoader ranges in the trace");
    item("io", "Pinned host memory for copies",
         m_.pageable_htod_count + m_.pinned_htod_count > 0
             ? (m_.pageable_htod_count > 0 ? CheckStatus::kFail : CheckStatus::kPass)
             : CheckStatus::kUnknown,
         fmt::format("{:.0f} pageable, {:.0f} pinned host-to-device copies per step", m_.pageable_htod_count,
                     m_.pinned_htod_count));
    bool mem_known = false;
    for (const auto& r : run_.ranks) mem_known |= r.trace->peak_allocated_bytes >= 0;
    item("memory", fmt::format("GPU memory < {:.0f}%", pct(th_.get("gpu_memory_max"))), byFinding(d, "memory.peak", mem_known),
         mem_known ? "from the profiler's memory events" : "profile with profile_memory=True, or use gpudoctor monitor");
    item("memory", "Checkpointing / accumulation where memory is short", CheckStatus::kUnknown,
         "a training-configuration choice; gpudoctor plan sizes it");
    item("monitoring", "Profiler trace analyzed per step", CheckStatus::kPass,
         fmt::format("{:.0f} steps over {} rank(s)", total_steps_, run_.ranks.size()));
    item("monitoring", "Host CPU < 80% and live GPU metrics", CheckStatus::kUnknown,
         "not in a profiler trace: watch with gpudoctor monitor (or nvidia-smi dmon)");
  }

  const RunAnalysis& run_;
  const Thresholds& th_;
  const DiagnosisInputs& in_;
  Means m_;
  double total_steps_ = 1;
  std::vector<Finding> f_;
};

}  // namespace

Diagnosis diagnose(const RunAnalysis& run, const Thresholds& th, const DiagnosisInputs& in) {
  return Rules(run, th, in).run();
}

}  // namespace gpudoctor
