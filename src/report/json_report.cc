#include "report/json_report.h"

#include <cmath>

#include <nlohmann/json.hpp>

#include "analysis/job_profile.h"
#include "diagnosis/what_if.h"
#include "report/bench_gpu_report.h"
#include "report/diagnosis_json.h"
#include "report/fleet_json.h"

namespace gpudoctor {

// The schema note below says 10 %.
static_assert(kPlanTieShare == 0.10, "json_report: the within_accuracy note names the tie share");

namespace {
using nlohmann::ordered_json;

const char* const kDefinitions[] = {
    "window: step N runs from the host start of ProfilerStep#N to the host start of ProfilerStep#N+1; the last step "
    "ends at the later of its host end and the end of the GPU work it launched. Without annotations, one window "
    "spans the first to the last GPU work. Windows tile the timeline: each nanosecond is counted once.",
    "gpu_busy_ns: length of the union of all kernels, memcpy and memset on all streams of the rank, inside the window.",
    "compute_ns: union of non-NCCL kernels. comm_ns: union of NCCL kernels.",
    "comm_overlap_ns: NCCL ∩ compute. comm_exposed_ns: NCCL − compute (communication nothing hides).",
    "copy_exposed_ns: memcpy/memset while no kernel runs. idle_ns: wall − busy.",
    "wall_ns = compute_ns + comm_exposed_ns + copy_exposed_ns + idle_ns exactly.",
    "idle causes, per gap of the busy set: sync = the call that launched the next GPU work started after the gap "
    "began and its host thread was then blocked in a synchronizing call; host = started after the gap began "
    "otherwise (the GPU waited for the host to launch); dependency = launched before the gap began (waiting on "
    "another stream or event); other = no GPU work follows, or no launch record. A gap running to the window's "
    "end is judged by the first GPU work after it.",
    "launch latency: GPU start of the work − end of the runtime/driver call that launched it (same correlation id), "
    "for calls made inside the window; can be negative when work starts before the call returns.",
    "dataloader_ns / optimizer_ns / sync_ns: union of enumerate(DataLoader)* ranges / Optimizer.step#* ranges / "
    "blocking calls (cudaStreamSynchronize, cudaDeviceSynchronize, cudaEventSynchronize, cudaMemcpy, ...) on the host.",
    "kernel classes: sums of kernel durations (kernels on several streams may overlap, so these can exceed busy time).",
    "collectives: bytes = max(in, out) elements × dtype size (nccl-tests 'size'); algbw = bytes / mean time; "
    "busbw = algbw × bus factor (allreduce 2(n−1)/n; allgather, reducescatter, alltoall (n−1)/n; others 1).",
    "straggler: the k-th NCCL kernel of each rank is matched across ranks; waiting = own duration − shortest; "
    "the rank with the shortest kernel arrived last.",
    "what_if: the traced step replayed as a dependency graph (host order and gaps, launches, streams, cross-stream "
    "waits, thread hand-offs, syncs, collectives joined by process group and sequence); its steps are the median "
    "over the traced steps (each the mean over ranks), so one stalled step does not set them; unprofiled_step_ns "
    "removes "
    "the profiler's own cost (per recorded host event, runtime call, GPU gap and CUDA graph node); a finding's "
    "what_if.step_ns is the un-profiled step after "
    "that fix alone (an edit of the graph, basis given), speedup = unprofiled_step_ns / step_ns; what_if.alternatives "
    "(where there are any): another way to apply the same fix, replayed on its own (cuda_graphs_model: the model "
    "alone graphed by torch.compile's reduce-overhead mode, the optimizer step eager; loader_workers_x4: 4x the "
    "workers of a DataLoader pool that sets the step). "
    "next_bottleneck (a finding's) and bottleneck (the un-profiled step's) name the ranking's category that leads "
    "the replayed step (null when unknown); plan applies the fixes one after another, the best first: each entry's "
    "step_ns is the un-profiled step after that fix and all before it, speedup against unprofiled_step_ns; "
    "within_accuracy: the other fixes whose step in that one's place the replay puts within 10 % of it (it cannot "
    "order them; best first, [] when none). "
    "unprofiled_path_ns: the un-profiled step's critical path by category (ns per step, adding up to the step). "
    "anchor (only with --measured-step-ms): the step measured without the profiler, the factor on the estimated host "
    "profiler cost that makes the replayed un-profiled step match it (every prediction uses that factor), whether "
    "it matched within 0.2 %, and why not (null when it did).",
    "job_summary: the job profile's fields as [key, text] pairs, what `gpudoctor compare` reads of a saved document.",
    "step_estimate: the traced steady-state step and the un-profiled step estimate (with its critical path) alone, "
    "as in what_if, written also under --no-what-if: what `gpudoctor compare` judges (null: the trace cannot be "
    "replayed).",
    "job: what the job already does, from the trace alone (null: the trace cannot tell). precision: of the GEMM, "
    "convolution and attention kernel time (one precision >= 90 % of the known time, else mixed); autocast: GEMM "
    "operators re-dispatched under torch.autocast; grad_accumulation_steps: backward passes (bursts of top-level "
    "autograd nodes) per Optimizer.step; parallelism.data: ddp / fsdp / zero / none from the wrappers' names, else "
    "the collectives (all-reduce: ddp; all-gather + reduce-scatter: fsdp); recompute_share: GPU time launched by "
    "forward operators inside backward nodes / that launched outside backward and the optimizer step; optimizer.impl: "
    "fused (_fused_* ops), foreach (_foreach_* ops), loop (per-parameter ops); dataloader.pin_memory: host-to-device "
    "copy bytes mostly pinned; host_syncs: operators inside which a blocking call ran (aten::item only where it "
    "copied and waited), per step, host time in the operator and wait in the call. Multi-rank: the value most ranks "
    "show, differences in notes, per-step figures averaged over ranks.",
    "notes: what the figures leave out or cut, one sentence each; left_out_ranks: traces without GPU activity, "
    "reported and left out of every figure; a last step whose annotation ends after the last recorded event (and "
    "Kineto's Record Window End) is cut there; gpu_outside_steps: GPU work starting before the first or after the "
    "last annotated step (all steps, before --steps selects), in no figure.",
    nullptr};

ordered_json dur(const DurationStats& d) {
  return {{"count", d.count},   {"total_ns", d.total_ns}, {"mean_ns", d.mean_ns}, {"min_ns", d.min_ns},
          {"p50_ns", d.p50_ns}, {"p95_ns", d.p95_ns},     {"max_ns", d.max_ns}};
}
// A name, or null when unknown (empty).
ordered_json orNull(const std::string& s) { return s.empty() ? ordered_json(nullptr) : ordered_json(s); }
ordered_json copy(const CopyStats& c) { return {{"count", c.count}, {"bytes", c.bytes}, {"dur_ns", c.dur_ns}}; }

ordered_json step(const StepBreakdown& b) {
  ordered_json j;
  if (b.window.annotated) j["step"] = b.window.number;
  j["window"] = {{"begin_ns", b.window.begin_ns}, {"end_ns", b.window.end_ns}};
  j["wall_ns"] = b.wall_ns;
  j["gpu_busy_ns"] = b.gpu_busy_ns;
  j["compute_ns"] = b.compute_ns;
  j["comm_ns"] = b.comm_ns;
  j["comm_overlap_ns"] = b.comm_overlap_ns;
  j["comm_exposed_ns"] = b.comm_exposed_ns;
  j["memcpy_ns"] = b.memcpy_ns;
  j["memset_ns"] = b.memset_ns;
  j["copy_exposed_ns"] = b.copy_exposed_ns;
  j["idle_ns"] = b.idle_ns;
  j["idle_cause_ns"] = {{"host", b.idle_host_ns},
                        {"sync", b.idle_sync_ns},
                        {"dependency", b.idle_dependency_ns},
                        {"other", b.idle_other_ns}};
  j["idle_in_loader_ns"] = b.idle_in_loader_ns;
  j["idle_in_loader_cause_ns"] = {{"host", b.idle_host_in_loader_ns}, {"sync", b.idle_sync_in_loader_ns}};
  j["gpu_wait_ns"] = b.gpu_wait_ns;
  j["kernels"] = b.kernels;
  ordered_json copies = ordered_json::object();
  for (int d = 0; d < kCopyDirCount; ++d)
    if (b.copies[d].count) copies[std::string(copyDirName(static_cast<CopyDir>(d)))] = copy(b.copies[d]);
  j["copies"] = copies;
  j["htod_pageable"] = copy(b.pageable_htod);
  j["htod_pinned"] = copy(b.pinned_htod);
  j["dtoh_pageable"] = copy(b.pageable_dtoh);
  j["dtoh_pinned"] = copy(b.pinned_dtoh);
  j["host"] = {{"dataloader_ns", b.dataloader_ns},
               {"optimizer_ns", b.optimizer_ns},
               {"sync_ns", b.sync_ns},
               {"launch_latency", dur(b.launch_latency)}};
  return j;
}

ordered_json kernels(const KernelSummary& k) {
  ordered_json j;
  j["kernels"] = k.kernels;
  j["total_ns"] = k.total_ns;
  ordered_json cls = ordered_json::array();
  for (const auto& c : k.classes)
    cls.push_back({{"class", kernelClassName(c.cls)}, {"share", c.share}, {"duration", dur(c.dur)}});
  j["classes"] = cls;
  ordered_json top = ordered_json::array();
  for (const auto& x : k.top)
    top.push_back({{"name", x.name},
                   {"class", kernelClassName(x.cls)},
                   {"op", x.op},
                   {"share", x.share},
                   {"duration", dur(x.dur)}});
  j["top"] = top;
  return j;
}

template <class T>
ordered_json optJson(const std::optional<T>& v) {
  return v ? ordered_json(*v) : ordered_json(nullptr);
}

ordered_json jobJson(const JobProfile& p) {
  ordered_json j;
  j["framework"] = orNull(p.framework);
  j["framework_version"] = orNull(p.framework_version);
  j["precision"] = orNull(p.precision);
  const auto& s = p.precision_shares;
  j["precision_shares"] = {{"fp32", s.fp32},
                           {"tf32", s.tf32},
                           {"bf16", s.bf16},
                           {"fp16", s.fp16},
                           {"fp8", s.fp8},
                           {"unknown", s.unknown},
                           {"eligible_kernel_ns_per_step", s.eligible_ns}};
  j["autocast"] = optJson(p.autocast);
  j["grad_scaler"] = p.grad_scaler;
  j["grad_accumulation_steps"] = optJson(p.grad_accumulation_steps);
  j["backward_passes_per_step"] = p.backward_passes_per_step;
  j["optimizer_steps_per_step"] = p.optimizer_steps_per_step;
  j["parallelism"] = {
      {"data", orNull(p.data_parallel)}, {"basis", orNull(p.data_parallel_basis)}, {"ranks", optJson(p.ranks)}};
  j["torch_compile"] = p.torch_compile;
  j["cuda_graphs"] = p.cuda_graphs;
  j["graph_phase"] = orNull(p.graph_phase);
  j["mode"] = orNull(p.mode);
  j["activation_checkpointing"] = optJson(p.activation_checkpointing);
  j["recompute_share"] = optJson(p.recompute_share);
  j["optimizer"] = {{"name", orNull(p.optimizer)},
                    {"impl", orNull(p.optimizer_impl)},
                    {"launches_per_step", p.optimizer_launches_per_step},
                    {"param_tensors", p.param_tensors}};
  j["attention"] = {{"sdpa_calls_per_step", p.sdpa_calls_per_step},
                    {"sdpa_math_calls_per_step", p.sdpa_math_calls_per_step}};
  j["dataloader"] = {{"present", p.dataloader},
                     {"workers", optJson(p.loader_workers)},
                     {"multiprocess", optJson(p.loader_multiprocess)},
                     {"pin_memory", optJson(p.pin_memory)}};
  ordered_json hs = ordered_json::array();
  for (const auto& h : p.host_syncs)
    hs.push_back({{"op", orNull(h.op)},
                  {"call", h.call},
                  {"caller", orNull(h.caller)},
                  {"copy", orNull(h.copy)},
                  {"count_per_step", h.count_per_step},
                  {"host_ns_per_step", h.host_ns_per_step},
                  {"wait_ns_per_step", h.wait_ns_per_step}});
  j["host_syncs"] = hs;
  j["steps"] = p.steps;
  j["notes"] = p.notes;
  j["not_in_source"] = p.not_in_source;
  return j;
}

// A step's parts (StepWhatIf::Parts): what sets the steady-state step.
ordered_json partsJson(const StepWhatIf::Parts& p) {
  return {{"host_ns", p.host_ns},
          {"gpu_ns", p.gpu_ns},
          {"gpu_busy_ns", p.busy_ns},
          {"loader_ns", p.loader_ns},
          {"bound", p.bound}};
}

ordered_json pathJson(const std::vector<std::pair<std::string, double>>& path) {
  ordered_json j = ordered_json::object();
  for (const auto& [k, v] : path) j[k] = v;
  return j;
}

ordered_json collectives(const std::vector<CollectiveStats>& cs) {
  ordered_json a = ordered_json::array();
  for (const auto& c : cs)
    a.push_back({{"collective", c.collective},
                 {"dtype", c.dtype},
                 {"kernel_variant", c.variant},
                 {"bytes", c.bytes},
                 {"group_size", c.group_size},
                 {"process_group", c.process_group},
                 {"duration", dur(c.dur)},
                 {"algbw_gbps", c.algbw_gbps},
                 {"busbw_gbps", c.busbw_gbps},
                 {"bus_factor", c.bus_factor}});
  return a;
}
// A finding's evidence (written for people: ms, %, GiB) in the units the document's header promises:
// integer ns, shares 0-1, bytes, bytes/s. Units without a base form are kept.
std::pair<ordered_json, std::string> evidenceInBaseUnits(double v, const std::string& unit) {
  auto ns = [](double x) { return ordered_json(static_cast<int64_t>(std::llround(x))); };
  if (unit == "ms/step") return {ns(v * 1e6), "ns/step"};
  if (unit == "ms") return {ns(v * 1e6), "ns"};
  if (unit == "us") return {ns(v * 1e3), "ns"};
  if (unit == "%") return {ordered_json(v / 100), "share"};
  if (unit.rfind("% of ", 0) == 0) return {ordered_json(v / 100), "share of " + unit.substr(5)};
  if (unit == "GiB") return {ordered_json(static_cast<int64_t>(std::llround(v * 1073741824.0))), "bytes"};
  if (unit == "GB/s") return {ordered_json(v * 1e9), "bytes/s"};
  return {ordered_json(v), unit};
}
// One rank of the run: its trace's identity and devices, what reading it took, its steps and totals.
ordered_json rankJson(const RankAnalysis& r) {
  const RankTrace& t = *r.trace;
  ordered_json rj;
  rj["rank"] = t.rank;
  rj["path"] = t.path;
  rj["world_size"] = t.world_size;
  rj["nccl_version"] = t.nccl_version;
  ordered_json devs = ordered_json::array();
  for (const auto& d : t.devices)
    devs.push_back({{"id", d.id},
                    {"name", d.name},
                    {"total_global_mem", d.total_global_mem},
                    {"num_sms", d.num_sms},
                    {"compute_capability", std::to_string(d.compute_major) + "." + std::to_string(d.compute_minor)}});
  rj["devices"] = devs;
  rj["read"] = {{"file_bytes", t.stats.file_bytes},   {"json_bytes", t.stats.input_bytes},
                {"json_events", t.stats.json_events}, {"intervals", t.stats.kept_events},
                {"flow_events", t.stats.flow_events}, {"parse_seconds", t.stats.parse_seconds}};
  if (t.peak_allocated_bytes >= 0) rj["peak_allocated_bytes"] = t.peak_allocated_bytes;
  ordered_json steps = ordered_json::array();
  for (const auto& b : r.steps) steps.push_back(step(b));
  rj["steps"] = steps;
  rj["total"] = step(r.total);
  rj["kernels"] = kernels(r.kernels);
  rj["collectives"] = collectives(r.collectives);
  rj["gpu_outside_steps"] = {{"ops", r.coverage.gpu_outside_ops},
                             {"dur_ns", r.coverage.gpu_outside_ns},
                             {"before_first_step_dur_ns", r.coverage.gpu_before_ns}};
  return rj;
}

// One finding: its evidence in the terminal's and in base units, its bound, its fix and its prediction.
ordered_json findingJson(const Finding& f) {
  ordered_json ev = ordered_json::array();
  for (const auto& e : f.evidence) {
    auto [bv, bu] = evidenceInBaseUnits(e.value, e.unit);
    ev.push_back({{"name", e.name}, {"value", e.value}, {"unit", e.unit}, {"base_value", bv}, {"base_unit", bu}});
  }
  ordered_json fj = {{"id", f.id},
                     {"severity", severityName(f.severity)},
                     {"title", f.title},
                     {"evidence", ev},
                     {"gain_ms_per_step", f.gain_ms_per_step},
                     {"gain_share", f.gain_share},
                     {"gain_is_bound", !f.gain_is_estimate},
                     {"floor_step_ms", f.floor_step_ms > 0 ? ordered_json(f.floor_step_ms) : ordered_json(nullptr)},
                     {"gain_basis", f.gain_basis},
                     {"explanation", f.explanation},
                     {"fix", f.fix}};
  if (f.what_if.available) {
    fj["what_if"] = {{"step_ns", f.what_if.step_ns},
                     {"speedup", f.what_if.speedup},
                     {"next_bottleneck", orNull(f.what_if.next_bottleneck)},
                     {"host_ns", f.what_if.host_ns},
                     {"gpu_busy_ns", f.what_if.gpu_busy_ns},
                     {"basis", f.what_if.basis}};
    if (!f.what_if.alternatives.empty()) {
      ordered_json alts = ordered_json::array();
      for (const auto& a : f.what_if.alternatives)
        alts.push_back({{"fix", a.fix},
                        {"step_ns", a.step_ns},
                        {"speedup", a.speedup},
                        {"next_bottleneck", orNull(a.next_bottleneck)}});
      fj["what_if"]["alternatives"] = std::move(alts);
    }
  } else if (!f.what_if.basis.empty()) {
    fj["what_if_refused"] = f.what_if.basis;  // a prediction withheld (it broke a bound), and why
  }
  return fj;
}

}  // namespace

ordered_json diagnosisJson(const Diagnosis& d, const Thresholds* thresholds) {
  ordered_json dj;
  dj["primary_bottleneck"] = d.primary;
  dj["step_ms"] = d.step_ms;
  ordered_json rk = ordered_json::array();
  for (const auto& b : d.ranking)
    rk.push_back({{"category", b.category}, {"share", b.share}, {"ms_per_step", b.ms_per_step}});
  dj["ranking"] = rk;
  ordered_json gr = ordered_json::array();
  for (const auto& b : d.groups)
    gr.push_back({{"group", b.category}, {"share", b.share}, {"ms_per_step", b.ms_per_step}});
  dj["groups"] = gr;
  dj["primary_group"] = d.groups.empty() ? ordered_json(nullptr) : ordered_json(d.groups.front().category);
  ordered_json fs = ordered_json::array();
  for (const auto& f : d.findings) fs.push_back(findingJson(f));
  dj["findings"] = fs;
  ordered_json cl = ordered_json::array();
  for (const auto& c : d.checklist)
    cl.push_back({{"area", c.area}, {"item", c.item}, {"status", checkStatusName(c.status)}, {"evidence", c.evidence}});
  dj["checklist"] = cl;
  const StepWhatIf& w = d.what_if;
  dj["what_if"] = w.available ? ordered_json{{"traced_step_ns", w.traced_step_ns},
                                             {"replayed_step_ns", w.replayed_step_ns},
                                             {"unprofiled_step_ns", w.unprofiled_step_ns},
                                             {"unprofiled_path_ns", pathJson(w.unprofiled_path)},
                                             {"bottleneck", orNull(w.bottleneck)},
                                             {"traced_parts", partsJson(w.traced_parts)},
                                             {"unprofiled_parts", partsJson(w.unprofiled_parts)},
                                             {"steps_replayed", w.steps_replayed},
                                             {"steps_in_trace", w.steps_in_trace},
                                             {"basis", w.basis}}
                              : ordered_json{{"traced_step_ns", nullptr},          {"replayed_step_ns", nullptr},
                                             {"unprofiled_step_ns", nullptr},      {"unprofiled_path_ns", nullptr},
                                             {"bottleneck", orNull(w.bottleneck)}, {"basis", w.basis}};
  if (w.available && w.measured_step_ns > 0)
    dj["what_if"]["anchor"] = {{"measured_step_ns", w.measured_step_ns},
                               {"profiler_cost_factor", w.profiler_cost_factor},
                               {"matched", w.anchored},
                               {"note", orNull(w.anchor_note)}};
  if (w.available && w.pool_period_unidentified)  // the step rests on the steps' mean, not the pool's period
    dj["what_if"]["loader_pool"] = {
        {"period_identified", false}, {"waited_fetches", w.pool_waited_fetches}, {"fetches", w.pool_fetches}};
  ordered_json plan = ordered_json::array();
  for (const auto& p : d.plan) {
    ordered_json tied = ordered_json::array();
    for (const auto& a : p.within_accuracy)
      tied.push_back({{"finding", a.finding}, {"fix", a.fix}, {"step_ns", a.step_ns}, {"speedup", a.speedup}});
    plan.push_back({{"finding", p.finding},
                    {"fix", p.fix},
                    {"step_ns", p.step_ns},
                    {"speedup", p.speedup},
                    {"next_bottleneck", orNull(p.next_bottleneck)},
                    {"within_accuracy", std::move(tied)}});
  }
  dj["plan"] = plan;
  // What compare judges: the step alone, also under --no-what-if (null: no replay).
  const StepWhatIf& e = d.step_estimate;
  dj["step_estimate"] = {{"traced_step_ns", e.available ? ordered_json(e.traced_step_ns) : ordered_json()},
                         {"unprofiled_step_ns", e.available ? ordered_json(e.unprofiled_step_ns) : ordered_json()},
                         {"unprofiled_path_ns", e.available ? pathJson(e.unprofiled_path) : ordered_json()},
                         {"basis", e.available       ? e.basis
                                   : e.basis.empty() ? std::string("not computed")
                                                     : "no replay: " + e.basis}};
  if (thresholds) {
    ordered_json th = ordered_json::object();
    for (const auto& t : thresholds->all()) {  // whole values (bytes, counts) as integers
      if (std::floor(t.value) == t.value && std::fabs(t.value) < 9e15)
        th[std::string(t.key())] = static_cast<int64_t>(t.value);
      else
        th[std::string(t.key())] = t.value;
    }
    dj["thresholds"] = th;
  }
  return dj;
}

const char* const* breakdownDefinitions() { return kDefinitions; }

std::string renderJson(const RunAnalysis& run, double read_seconds, const Diagnosis* diagnosis,
                       const Thresholds* thresholds, const Efficiency* efficiency, const FleetReport* fleet) {
  ordered_json j;
  j["tool"] = "gpudoctor analyze";
  j["schema_version"] = 1;  // bumped when a field changes meaning or goes away
  j["version"] = GPUDOCTOR_VERSION;
  j["units"] =
      "times in integer nanoseconds (_ns), sizes in bytes, bandwidth in GB/s (1e9 B/s), shares 0-1; a "
      "finding's evidence value/unit are as the terminal shows them (ms, %), base_value/base_unit in ns, "
      "shares, bytes";
  ordered_json defs = ordered_json::array();
  for (auto p = kDefinitions; *p; ++p) defs.push_back(*p);
  j["definitions"] = defs;
  j["read_seconds"] = read_seconds;
  j["job"] = jobJson(run.job);
  ordered_json js = ordered_json::array();  // what `compare` reads of the job (analysis/job_profile jobFields)
  for (const auto& [k, v] : jobFields(run.job)) js.push_back({k, v});
  j["job_summary"] = js;
  j["notes"] = run.notes;
  ordered_json left = ordered_json::array();
  for (const auto& l : run.left_out) left.push_back({{"rank", l.rank}, {"path", l.path}, {"reason", l.reason}});
  j["left_out_ranks"] = left;
  ordered_json ranks = ordered_json::array();
  for (const auto& r : run.ranks) ranks.push_back(rankJson(r));
  j["ranks"] = ranks;
  j["kernels_all_ranks"] = kernels(run.kernels);
  j["collectives_all_ranks"] = collectives(run.collectives);
  const auto& s = run.straggler;
  ordered_json sw = ordered_json::array();
  for (const auto& w : s.ranks)
    sw.push_back(
        {{"rank", w.rank}, {"nccl_ns", w.nccl_ns}, {"wait_ns", w.wait_ns}, {"last_arrivals", w.last_arrivals}});
  j["straggler"] = {{"matched", s.matched},
                    {"collectives", s.collectives},
                    {"rank", s.straggler},
                    {"share_last", s.straggler_share},
                    {"others_wait_ns", s.others_wait_ns},
                    {"note", s.note},
                    {"ranks", sw}};
  if (diagnosis) j["diagnosis"] = diagnosisJson(*diagnosis, thresholds);
  if (efficiency) j["efficiency"] = ordered_json::parse(renderEfficiencyJson(*efficiency));  // one writer of its fields
  if (fleet) j["fleet"] = fleetObject(*fleet);
  // Paths and names from traces need not be UTF-8: replace what is not rather than fail.
  return j.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace gpudoctor
