#include "diagnosis/what_if.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "diagnosis/diagnosis.h"
#include "diagnosis/fixes/registry.h"
#include "diagnosis/fixes/sparse_embedding_grads.h"
#include "diagnosis/job_aware.h"
#include "diagnosis/rule.h"
#include "diagnosis/rules/fixes.h"
#include "diagnosis/thresholds.h"
#include "diagnosis/what_if_pool.h"

namespace gpudoctor {

bool fixEdit(std::string_view fix, const Ceilings* c, const RunAnalysis* run, ReplayEdits& ed, std::string& basis) {
  const Fix* f = findFix(fix);
  return f && f->edit({c, run}, ed, basis);
}

std::vector<double> profilerSpeedScale(const ReplayModel& model, double exponent, ProfilerSpeedGauge gauge,
                                       double options_exponent) {
  std::vector<double> scale;
  if (exponent == 0 && options_exponent == 0) return scale;
  const std::vector<bool> options = model.profilerOptionsInGaps();
  const double ref = static_cast<double>(gauge == ProfilerSpeedGauge::kHostGapP25      ? kProfilerSpeedRefNs
                                         : gauge == ProfilerSpeedGauge::kLaunchCallP50 ? kProfilerLaunchRefNs
                                                                                       : kProfilerDispatchRefNs);
  size_t rank = 0;
  for (int64_t ns : gauge == ProfilerSpeedGauge::kHostGapP25      ? model.hostGapP25()
                    : gauge == ProfilerSpeedGauge::kLaunchCallP50 ? model.launchCallP50()
                                                                  : model.dispatchP50()) {
    const bool in_gaps = gauge == ProfilerSpeedGauge::kHostGapP25 && rank < options.size() && options[rank];
    ++rank;
    scale.push_back(ns > 0 ? std::pow(static_cast<double>(ns) / ref, in_gaps ? options_exponent : exponent) : 1.0);
  }
  return scale;
}

ReplayEdits unprofiledEdits(const ReplayModel* model) {
  ReplayEdits ed;
  if (model) ed.rank_profiler_scale = profilerSpeedScale(*model);
  ed.host_event_overhead_ns = kProfilerHostEventNs;
  ed.loader_event_overhead_ns = kProfilerLoaderEventNs;
  ed.api_call_overhead_ns = kProfilerApiCallNs;
  ed.idle_call_overhead_ns = kProfilerIdleCallNs;
  ed.attr_call_overhead_ns = kProfilerAttrCallNs;
  ed.gpu_gap_overhead_ns = kProfilerGpuGapNs;
  ed.graph_node_overhead_ns = kProfilerGraphNodeNs;
  ed.graph_gap_cap_ns = kProfilerGraphGapCapNs;
  if (model) {
    // A worker pool the training thread waits for sets the step: its period is the pool's delivery
    // period in the trace (the workers run outside the profiled process), whatever the profiler
    // cost the host; without two fetches that waited, the host's traced step. A pool also sets it
    // where every fetch waited, however briefly (the profiled host just faster than the pool).
    const LoaderPool pool = model->loaderPool();
    if (pool.multiprocess &&
        (pool.wait_per_step_ns > kLoaderLimitingShare * pool.host_step_ns || pool.everyFetchWaited())) {
      ed.drop_loader_waits = true;
      ed.loader_period_ns = std::llround(pool.delivery_period_ns > 0 ? pool.delivery_period_ns : pool.host_step_ns);
    }
  }
  return ed;
}

ProfilerAnchor anchorProfilerCost(const ReplayModel& model, double measured_ns, ReplayEdits& ed) {
  const std::vector<double> scale0 =
      ed.rank_profiler_scale.empty() ? std::vector<double>(model.hostGapP25().size(), 1.0) : ed.rank_profiler_scale;
  // The host's part: what the host speed sets, and what the estimate from the trace gets wrong
  // (its GPU part, CUPTI's records, does not follow the host).
  auto at = [&](double factor) {
    ReplayEdits e = ed;
    e.rank_profiler_scale = scale0;
    for (double& s : e.rank_profiler_scale) s *= factor;
    return std::pair{e, model.replay(e)};
  };
  ProfilerAnchor a;
  auto take = [&](double factor, std::pair<ReplayEdits, Replay> r) {
    a.factor = factor;
    a.step_ns = r.second.replayed_step_ns;
    a.reached = std::abs(a.step_ns / measured_ns - 1) <= kAnchorTolerance;
    ed = std::move(r.first);
    return a;
  };
  auto one = at(1.0);
  if (!one.second.available) {
    a.note = one.second.reason;
    return a;
  }
  if (std::abs(one.second.replayed_step_ns / measured_ns - 1) <= kAnchorTolerance) return take(1.0, std::move(one));
  // The step falls as the cost removed grows (never below the GPU's own work): bisect on the factor.
  double lo = 0, hi = kAnchorMaxFactor;
  if (one.second.replayed_step_ns > measured_ns) {
    lo = 1.0;
    auto top = at(hi);
    if (top.second.replayed_step_ns > measured_ns * (1 + kAnchorTolerance)) {
      take(hi, std::move(top));
      a.possible = false;
      a.note = fmt::format(
          "the measured step ({:.2f} ms) is below the shortest the trace gives without its profiler "
          "({:.2f} ms, {}x its estimated cost removed)",
          measured_ns / 1e6, a.step_ns / 1e6, kAnchorMaxFactor);
      return a;
    }
  } else {
    hi = 1.0;
    auto none = at(0.0);
    if (none.second.replayed_step_ns < measured_ns * (1 - kAnchorTolerance)) {
      take(0.0, std::move(none));
      a.possible = false;
      a.note = fmt::format(
          "the measured step ({:.2f} ms) is above the traced step as replayed with the profiler's "
          "host cost in it ({:.2f} ms)",
          measured_ns / 1e6, a.step_ns / 1e6);
      return a;
    }
  }
  double f = (lo + hi) / 2;
  auto mid = at(f);
  for (int i = 0; i < 40 && std::abs(mid.second.replayed_step_ns / measured_ns - 1) > kAnchorTolerance; ++i) {
    (mid.second.replayed_step_ns > measured_ns ? lo : hi) = f;
    f = (lo + hi) / 2;
    mid = at(f);
  }
  if (f < 1 / kAnchorFactorRange || f > kAnchorFactorRange) {
    // Beyond what the host's speed explains: the rest of the difference is not the profiler's.
    const double kept = std::clamp(f, 1 / kAnchorFactorRange, kAnchorFactorRange);
    take(kept, at(kept));
    a.reached = false;
    a.note = fmt::format(
        "matching the measured step ({:.2f} ms) needs {:.2f}x the profiler's estimated host cost, "
        "beyond the {:.1f}x that the host's speed explains; kept {:.2f}x ({:.2f} ms): the rest of the "
        "difference is the job's own (its timing's noise, or its GPU or loader running differently)",
        measured_ns / 1e6, f, kAnchorFactorRange, kept, a.step_ns / 1e6);
    return a;
  }
  take(f, std::move(mid));
  if (!a.reached)  // a jump: the step changes by more than the tolerance at one factor (a flipped critical path)
    a.note = fmt::format("the replayed step jumps past the measured one ({:.2f} ms) at {:.2f}x the estimated cost",
                         measured_ns / 1e6, f);
  return a;
}

namespace {
StepWhatIf::Parts stepParts(const SteadyState& s) {
  static constexpr const char* kNames[] = {"host", "gpu", "gpu_busy", "loader"};
  return {std::llround(s.host_ns), std::llround(s.gpu_period_ns), std::llround(s.busy_ns), std::llround(s.loader_ns),
          kNames[static_cast<size_t>(s.bound)]};
}
}  // namespace

std::string_view fixOfFinding(std::string_view id) {
  const Fix* f = fixAnswering(id);
  return f ? f->id() : "";
}

std::string_view categoryOfFix(std::string_view fix) {
  const Fix* f = findFix(fix);
  return f ? f->category() : "";
}

namespace {

// A fix found worth less than this share of the step is not a plan step (nor an alternative to one).
constexpr double kMinPlanGain = 0.01;

// The steps of the unedited replays (the traced one and the un-profiled one) into `w`. pool_ns: the
// period of a DataLoader pool that sets the step (unprofiledEdits' loader_period_ns), the traced
// loop's floor as well as the un-profiled one's, so that one step holds for both.
void setSteps(const Replay& traced, const Replay& base, double pool_ns, StepWhatIf& w) {
  SteadyState t = traced.traced;
  if (pool_ns > t.period_ns) t.period_ns = pool_ns, t.loader_ns = pool_ns, t.bound = StepBound::kLoader;
  w.available = true;
  w.traced_step_ns = std::llround(std::max(traced.traced_step_ns, pool_ns));
  w.replayed_step_ns = std::llround(std::max(traced.replayed_step_ns, pool_ns));
  w.unprofiled_step_ns = std::llround(base.replayed_step_ns);
  w.bottleneck = pathCategoryName(base.leading);
  w.traced_parts = stepParts(t);
  w.steps_replayed = static_cast<int64_t>(traced.windows_replayed);
  w.steps_in_trace = static_cast<int64_t>(traced.windows_total);
  w.unprofiled_parts = stepParts(base.replayed);
  w.unprofiled_path.clear();
  for (int k = 0; k < kPathCategoryCount; ++k)
    w.unprofiled_path.push_back({std::string(pathCategoryName(static_cast<PathCategory>(k))), base.path_ns[k]});
}

}  // namespace

StepWhatIf estimateStep(const RunAnalysis& run, double measured_step_ns) {
  StepWhatIf w;
  const ReplayModel model(run);
  ReplayEdits unprofiled = unprofiledEdits(&model);
  if (measured_step_ns > 0) anchorProfilerCost(model, measured_step_ns, unprofiled);
  std::vector<Replay> r = model.replayAll({ReplayEdits{}, unprofiled});
  if (!r[0].available || !r[1].available || r[1].replayed_step_ns <= 0) {
    w.basis = r[0].available ? r[1].reason : r[0].reason;
    return w;
  }
  setSteps(r[0], r[1], static_cast<double>(unprofiled.loader_period_ns), w);
  notePoolPeriod(model, unprofiled, w);
  w.basis = "dependency-graph replay, the profiler's cost removed (as the what-if's un-profiled step)";
  return w;
}

std::vector<double> hostTimePerOperator(const ReplayModel& model, const Replay& replay) {
  const std::vector<double> ops = model.operatorsPerStep();
  std::vector<double> v(ops.size(), 0.0);
  // The host's step is its busy time only where the host sets the step: elsewhere it holds waits.
  if (!replay.available || replay.replayed.bound != StepBound::kHost) return v;
  for (size_t i = 0; i < replay.ranks.size() && i < v.size(); ++i) {  // in the model's rank order
    if (ops[i] <= 0) continue;
    std::vector<double> steps;
    for (const ReplayedWindow& w : replay.ranks[i].windows) steps.push_back(static_cast<double>(w.replayed_ns));
    v[i] = medianOf(std::move(steps)) / ops[i];
  }
  return v;
}

namespace {

// The replayed step as the steady state takes it (the largest of the host's step, the GPU's period and
// busy time, the loader's period) but with the host's mean step over the windows and ranks in place of
// its median: the basis the findings' bounds (means over the steps) are on. < 0 without windows.
double meanPeriod(const Replay& r) {
  double sum = 0;
  size_t n = 0;
  for (const RankReplay& rr : r.ranks)
    for (const ReplayedWindow& w : rr.windows) sum += static_cast<double>(w.replayed_ns), ++n;
  if (n == 0) return -1;
  const SteadyState& s = r.replayed;
  return std::max({sum / static_cast<double>(n), s.gpu_period_ns, s.busy_ns, s.loader_ns});
}

// A finding whose fix the replay can edit: the replay of the un-profiled job with that fix alone.
struct Candidate {
  std::string finding, fix, basis;
  size_t replay;   // index into the replays
  size_t alt = 0;  // the fix's alternative (Fix::alternative()), or 0
  std::string alt_fix, alt_basis;
};

// One candidate per finding with an editable fix, its edits appended to `edits`.
std::vector<Candidate> candidates(const RunAnalysis& run, const Ceilings* c, const std::vector<Finding>& findings,
                                  const ReplayEdits& unprofiled, std::vector<ReplayEdits>& edits) {
  std::vector<Candidate> cands;
  for (const Finding& f : findings) {
    std::string_view fix = fixOfFinding(f.id);
    if (fix.empty()) continue;
    if (fix == "cuda_graphs" && (run.job.data_parallel == "fsdp" || hasDataDependentShapes(run.job)))
      continue;  // not capturable (job_aware)
    ReplayEdits ed = unprofiled;
    std::string basis;
    if (!fixEdit(fix, c, &run, ed, basis)) continue;
    cands.push_back({f.id, std::string(fix), basis, edits.size(), 0, {}, {}});
    edits.push_back(ed);
    // Another way to apply it (cuda_graphs: the model alone graphed; loader_workers: 4x the workers),
    // replayed beside it.
    const Fix* main_fix = findFix(fix);
    const std::string_view alt_fix = main_fix ? main_fix->alternative() : "";
    ReplayEdits alt = unprofiled;
    std::string alt_basis;
    if (!alt_fix.empty() && fixEdit(alt_fix, c, &run, alt, alt_basis)) {
      cands.back().alt = edits.size();
      cands.back().alt_fix = std::string(alt_fix);
      cands.back().alt_basis = std::move(alt_basis);
      edits.push_back(alt);
    }
  }
  return cands;
}

// A materialized attention's bound, restated from the replay's graph where it is larger: everything a
// fused kernel replaces (the batched GEMMs, the softmax, the score matrix's masking, scaling, dropout
// and casts between them, and the host's calls that launch only those). The rule's guide (a share of
// the attention-class kernels) leaves out the score matrix's other kernels.
void restateAttentionBound(Diagnosis& d, const ReplayModel& model) {
  for (Finding& f : d.findings) {
    if (f.id != "attention.materialized") continue;
    const int64_t ns = model.materializedAttentionNs();
    if (static_cast<double>(ns) <= f.gain_ms_per_step * 1e6) continue;
    if (f.gain_ms_per_step > 0) f.gain_share *= static_cast<double>(ns) / (f.gain_ms_per_step * 1e6);
    f.gain_ms_per_step = static_cast<double>(ns) / 1e6;
    f.gain_basis =
        "the time of all a fused kernel replaces: the batched GEMMs, the softmax and the score matrix's kernels "
        "between them (masking, scaling, dropout, casts), and the calls that launch only those (upper bound)";
  }
}

// Sparse embedding gradients at their best, the dense-gradient finding's bound: the dense tables' zero
// fills and the optimizer's estimated update of them removed from the un-profiled graph, nothing added
// (the prediction, fixes/sparse_embedding_grads.h, adds the sparse path's host work). Appended to `edits`
// where the finding is; its index, or 0.
size_t embeddingBoundEdit(const RunAnalysis& run, const std::vector<Finding>& findings, const ReplayEdits& unprofiled,
                          std::vector<ReplayEdits>& edits) {
  if (std::none_of(findings.begin(), findings.end(), [](const Finding& f) { return f.id == "embedding.dense_grads"; }))
    return 0;
  ReplayEdits e = unprofiled;
  if (!sparseEmbeddingEdit(run, 0, e)) return 0;
  edits.push_back(e);
  return edits.size() - 1;
}

// The dense-gradient finding's bound, restated from that replay where it is smaller: a step the host
// sets gains nothing from GPU work removed. Under 5 % of the step (the replay's own accuracy): info.
void restateEmbeddingBound(Diagnosis& d, const Replay& base, const Replay& best) {
  if (!best.available || base.replayed_step_ns <= 0) return;
  const double saved = std::max(0.0, base.replayed_step_ns - best.replayed_step_ns);
  for (Finding& f : d.findings) {
    if (f.id != "embedding.dense_grads" || saved >= f.gain_ms_per_step * 1e6) continue;
    f.gain_ms_per_step = saved / 1e6;
    f.gain_share = saved / base.replayed_step_ns;
    f.gain_basis =
        "the un-profiled step less the replayed one with the tables' zero fills and the optimizer's estimated update "
        "of them removed and nothing added (upper bound: the sparse path's own work, sorting the ids with a host sync "
        "per table and SparseAdam's operators, only adds to it)";
    if (f.gain_share < 0.05) f.severity = Severity::kInfo;
    f.explanation += fmt::format(
        " Here, with the fills and the tables' update gone from the replayed graph and nothing added, the "
        "un-profiled step would be {:.2f} ms against {:.2f} ms: at most {:.2f} ms a step to gain.",
        best.replayed_step_ns / 1e6, base.replayed_step_ns / 1e6, saved / 1e6);
  }
}

// Each candidate's prediction into its finding (r[1]: the un-profiled job; r[k.replay]: with the fix).
// Returns the findings whose prediction broke their own bound; excess[k.replay]: what a prediction
// taken as the mean saving adds to its replayed step (0 elsewhere).
std::vector<std::string> fillPredictions(Diagnosis& d, const std::vector<Candidate>& cands,
                                         const std::vector<Replay>& r, std::vector<double>& excess) {
  const Replay& base = r[1];
  std::vector<std::string> refused;
  for (const Candidate& k : cands) {
    const Replay& e = r[k.replay];
    if (!e.available || e.replayed_step_ns <= 0) continue;
    for (Finding& f : d.findings) {
      if (f.id != k.finding) continue;
      // A fix never saves more than the bound its finding states: where the replay says it would,
      // one of the two is wrong, so no prediction is given, and the reason is. The bounds are means
      // over the steps, the step a median: where the replay's saving is within the bound in the mean
      // over steps, that mean saving is the prediction instead of the two medians' difference.
      const double saved_ns = base.replayed_step_ns - e.replayed_step_ns, bound_ns = f.gain_ms_per_step * 1e6;
      double step_ns = e.replayed_step_ns;
      std::string mean_note;
      if (f.gain_ms_per_step > 0 && !f.gain_is_estimate && saved_ns > bound_ns * (1 + kBoundTolerance)) {
        const double base_mean = meanPeriod(base), fixed_mean = meanPeriod(e);
        const double mean_ns = base_mean - fixed_mean;
        if (base_mean < 0 || fixed_mean < 0 || mean_ns > bound_ns * (1 + kBoundTolerance)) {
          f.what_if.available = false;
          f.what_if.basis = fmt::format(
              "refused: the replay saves {:.2f} ms/step, above the finding's own bound of {:.2f} "
              "ms/step ({})",
              saved_ns / 1e6, f.gain_ms_per_step, f.gain_basis);
          refused.push_back(k.finding);
          continue;
        }
        step_ns = base.replayed_step_ns - std::max(0.0, mean_ns);
        excess[k.replay] = step_ns - e.replayed_step_ns;
        mean_note = fmt::format(
            "; the saving in the mean over the steps: the replayed steps' medians differ by {:.2f} ms, above the "
            "finding's bound, their steps by {:.2f} ms in the mean",
            saved_ns / 1e6, mean_ns / 1e6);
      }
      f.what_if.available = true;
      f.what_if.step_ns = std::llround(step_ns);
      f.what_if.speedup = base.replayed_step_ns / step_ns;
      f.what_if.next_bottleneck = pathCategoryName(e.leading);
      f.what_if.host_ns = std::llround(e.replayed.host_ns);
      f.what_if.gpu_busy_ns = std::llround(e.replayed.busy_ns);
      f.what_if.basis = k.basis + "; replayed" + mean_note;
      if (k.alt > 0 && r[k.alt].available && r[k.alt].replayed_step_ns > 0) {
        const Replay& m = r[k.alt];
        f.what_if.alternatives.push_back({k.alt_fix, std::llround(m.replayed_step_ns),
                                          base.replayed_step_ns / m.replayed_step_ns,
                                          std::string(pathCategoryName(m.leading))});
        f.what_if.basis += fmt::format("; alternative {}: {}: {:.2f} ms/step, {:.2f}x", k.alt_fix, k.alt_basis,
                                       m.replayed_step_ns / 1e6, base.replayed_step_ns / m.replayed_step_ns);
      }
    }
  }
  return refused;
}

}  // namespace

void predictFixes(const RunAnalysis& run, const Ceilings* c, Diagnosis& d, const Thresholds& th,
                  double measured_step_ns) {
  const ReplayModel model(run);
  // Every replay at once: the traced graph, the un-profiled job, and one per editable fix.
  ReplayEdits unprofiled = unprofiledEdits(&model);
  const std::vector<double> estimated_scale = unprofiled.rank_profiler_scale;
  if (measured_step_ns > 0) {
    const ProfilerAnchor a = anchorProfilerCost(model, measured_step_ns, unprofiled);
    d.what_if.measured_step_ns = std::llround(measured_step_ns);
    d.what_if.profiler_cost_factor = a.factor;
    d.what_if.anchored = a.reached;
    d.what_if.anchor_possible = a.possible;
    d.what_if.anchor_note = a.note;
  }
  std::optional<Replay> unprofiled_replay = addPoolFinding(d, model, unprofiled, th);
  std::vector<ReplayEdits> edits = {ReplayEdits{}, unprofiled};
  const std::vector<Candidate> cands = candidates(run, c, d.findings, unprofiled, edits);
  const size_t embedding_bound = embeddingBoundEdit(run, d.findings, unprofiled, edits);
  if (std::any_of(edits.begin(), edits.end(), [](const ReplayEdits& e) { return e.graphed_param_ops > 0; })) {
    // A graphed call's host cost is counted in operators: the un-profiled host's time per operator.
    if (!unprofiled_replay) unprofiled_replay = model.replay(unprofiled);
    unprofiled.rank_op_ns = hostTimePerOperator(model, *unprofiled_replay);
    for (size_t k = 1; k < edits.size(); ++k) edits[k].rank_op_ns = unprofiled.rank_op_ns;
  }
  std::vector<Replay> r;
  if (unprofiled_replay) {  // replayed already: the others only
    edits.erase(edits.begin() + 1);
    r = model.replayAll(edits);
    r.insert(r.begin() + 1, std::move(*unprofiled_replay));
  } else {
    r = model.replayAll(edits);
  }
  const Replay& traced = r[0];
  const Replay& base = r[1];
  if (!traced.available) {
    d.what_if.basis = traced.reason;
    return;
  }
  if (!base.available || base.replayed_step_ns <= 0) {
    d.what_if.basis = base.reason;
    return;
  }
  setSteps(traced, base, static_cast<double>(unprofiled.loader_period_ns), d.what_if);
  notePoolPeriod(model, unprofiled, d.what_if);
  const std::vector<int64_t> p25 = model.hostGapP25();
  const std::vector<bool> options = model.profilerOptionsInGaps();
  const bool options0 = !options.empty() && options[0];
  d.what_if.basis = fmt::format(
      "dependency-graph replay of every host call and GPU operation (worst step off the trace by {:.2f} %); "
      "un-profiled: the profiler's cost removed, {:.2f} us per recorded host event, and per runtime call (measured) "
      "{:.2f} us for one that launches or waits, {:.2f} us for cudaFuncGetAttributes, {:.2f} us for one that does "
      "neither, at a host that spends {:.1f} us before a quarter of its events (x {:.2f} on the first rank: its {:.2f} "
      "us, "
      "to the power {:.1f}{}), {:.2f} us per GPU gap, {:.1f} us per CUDA graph node (docs/whatif_validation.md, "
      "docs/validation_h100_lab.md); what leads afterwards: the category with the most time on the replayed step's "
      "critical path",
      100 * traced.worst_error, kProfilerHostEventNs / 1e3, kProfilerApiCallNs / 1e3, kProfilerAttrCallNs / 1e3,
      kProfilerIdleCallNs / 1e3, kProfilerSpeedRefNs / 1e3, estimated_scale.empty() ? 1.0 : estimated_scale[0],
      p25.empty() ? 0.0 : p25[0] / 1e3, options0 ? kProfilerSpeedExponentOptions : kProfilerSpeedExponent,
      options0 ? ", its gaps holding with_stack's or record_shapes' own work" : "", kProfilerGpuGapNs / 1e3,
      kProfilerGraphNodeNs / 1e3);
  if (d.what_if.measured_step_ns > 0)
    d.what_if.basis += fmt::format(
        "; anchored to the measured un-profiled step of {:.2f} ms: the profiler's estimated host cost x {:.3f}{}",
        d.what_if.measured_step_ns / 1e6, d.what_if.profiler_cost_factor,
        d.what_if.anchored ? fmt::format(" (replayed {:.2f} ms)", base.replayed_step_ns / 1e6)
                           : " — not matched: " + d.what_if.anchor_note);
  d.step_estimate = d.what_if;
  restateLoaderBound(d);
  restateAttentionBound(d, model);
  if (embedding_bound > 0) restateEmbeddingBound(d, base, r[embedding_bound]);
  std::vector<double> excess(r.size(), 0.0);
  const std::vector<std::string> refused = fillPredictions(d, cands, r, excess);
  // The plan: from the un-profiled job, add the fix that gains most with those already chosen,
  // while one gains at least 1 %.
  std::vector<const Candidate*> left;
  for (const Candidate& k : cands) {
    bool dup = false;  // two findings advising one fix: the first
    for (const Candidate* o : left) dup |= o->fix == k.fix;
    const bool refuse = std::find(refused.begin(), refused.end(), k.finding) != refused.end();
    if (!dup && !refuse && r[k.replay].available) left.push_back(&k);
  }
  ReplayEdits now = unprofiled;
  double step = base.replayed_step_ns;
  std::string basis;
  double carried = 0;  // the excess (fillPredictions) of the fixes chosen, kept with them
  for (bool first = true; !left.empty(); first = false) {
    std::vector<ReplayEdits> tries;
    std::vector<Replay> tr;
    for (const Candidate* k : left) {
      ReplayEdits t = now;
      fixEdit(k->fix, c, &run, t, basis);
      tries.push_back(t);
      if (first) tr.push_back(r[k->replay]);  // the first round is each fix alone: replayed above
    }
    if (!first) tr = model.replayAll(tries);
    for (size_t i = 0; i < tr.size(); ++i)
      if (tr[i].available) tr[i].replayed_step_ns += carried + excess[left[i]->replay];
    size_t best = tr.size();
    for (size_t i = 0; i < tr.size(); ++i)
      if (tr[i].available && tr[i].replayed_step_ns > 0 &&
          (best == tr.size() || tr[i].replayed_step_ns < tr[best].replayed_step_ns))
        best = i;
    if (best == tr.size() || tr[best].replayed_step_ns > step * (1 - kMinPlanGain)) break;
    std::vector<PlanAlternative> tied;  // those the replay cannot tell from the best
    for (size_t i = 0; i < tr.size(); ++i) {
      const double s = tr[i].replayed_step_ns;
      if (i != best && tr[i].available && s > 0 && s <= step * (1 - kMinPlanGain) &&
          s <= tr[best].replayed_step_ns * (1 + kPlanTieShare))
        tied.push_back({left[i]->finding, left[i]->fix, std::llround(s), base.replayed_step_ns / s});
    }
    std::sort(tied.begin(), tied.end(), [](const auto& a, const auto& b) { return a.step_ns < b.step_ns; });
    step = tr[best].replayed_step_ns;
    carried += excess[left[best]->replay];
    now = tries[best];
    d.plan.push_back({left[best]->finding, left[best]->fix, std::llround(step), base.replayed_step_ns / step,
                      std::string(pathCategoryName(tr[best].leading)), std::move(tied)});
    left.erase(left.begin() + static_cast<std::ptrdiff_t>(best));
  }
}

}  // namespace gpudoctor
