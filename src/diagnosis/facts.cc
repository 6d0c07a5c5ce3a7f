#include "diagnosis/facts.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "analysis/gpu_generation.h"
#include "analysis/precision_kinds.h"
#include "analysis/replay/replay.h"

namespace gpudoctor {

double Facts::gemmNs() const {
  double g = 0;
  for (auto c : {KernelClass::kGemmFp32Simt, KernelClass::kGemmTf32, KernelClass::kGemmFp16, KernelClass::kGemmBf16,
                 KernelClass::kGemmFp8, KernelClass::kGemmOther})
    g += classNs(c);
  return g;
}

std::vector<BottleneckShare> rankBottlenecks(const StepMeans& m) {
  auto share = [&](double ns) { return m.wall > 0 ? ns / m.wall : 0; };
  const auto parts = rankingCategories(m.compute, m.comm_exposed, m.copies, m.idle_host, m.idle_sync, m.idle_dependency,
                                       m.idle_other, m.idle_host_loader, m.idle_sync_loader);
  std::vector<BottleneckShare> r;
  for (int k = 0; k < kPathCategoryCount; ++k)
    r.push_back({std::string(pathCategoryName(static_cast<PathCategory>(k))), share(parts[k]), parts[k] / 1e6});
  std::stable_sort(r.begin(), r.end(), [](const auto& a, const auto& b) { return a.share > b.share; });
  return r;
}

std::string_view groupOf(std::string_view c) { return categoryGroup(c); }

std::vector<BottleneckShare> groupBottlenecks(const std::vector<BottleneckShare>& ranking) {
  std::vector<BottleneckShare> g;
  for (const auto& b : ranking) {
    std::string_view name = groupOf(b.category);
    auto it = std::find_if(g.begin(), g.end(), [&](const BottleneckShare& x) { return x.category == name; });
    if (it == g.end())
      g.push_back({std::string(name), b.share, b.ms_per_step});
    else
      it->share += b.share, it->ms_per_step += b.ms_per_step;
  }
  std::stable_sort(g.begin(), g.end(), [](const auto& a, const auto& b) { return a.share > b.share; });
  return g;
}

namespace {

StepMeans meansOf(const RunAnalysis& run, double& steps) {
  StepMeans m;
  steps = 0;
  for (const auto& r : run.ranks) {
    const auto& t = r.total;
    steps += static_cast<double>(r.steps.size());
    m.wall += t.wall_ns;
    m.busy += t.gpu_busy_ns;
    m.compute += t.compute_ns;
    m.comm += t.comm_ns;
    m.comm_exposed += t.comm_exposed_ns;
    m.copies += t.copy_exposed_ns;
    m.idle += t.idle_ns;
    m.idle_host += t.idle_host_ns;
    m.idle_sync += t.idle_sync_ns;
    m.idle_dependency += t.idle_dependency_ns;
    m.idle_other += t.idle_other_ns;
    m.idle_loader += t.idle_in_loader_ns;
    m.idle_host_loader += t.idle_host_in_loader_ns;
    m.idle_sync_loader += t.idle_sync_in_loader_ns;
    m.loader += t.dataloader_ns;
    m.optimizer += t.optimizer_ns;
    m.sync += t.sync_ns;
    m.pageable_htod_ns += t.pageable_htod.dur_ns;
    m.pageable_htod_count += t.pageable_htod.count;
    m.pageable_htod_bytes += static_cast<double>(t.pageable_htod.bytes);
    m.pinned_htod_count += t.pinned_htod.count;
  }
  double n = std::max(1.0, steps);
  for (double* x : {&m.wall,
                    &m.busy,
                    &m.compute,
                    &m.comm,
                    &m.comm_exposed,
                    &m.copies,
                    &m.idle,
                    &m.idle_host,
                    &m.idle_sync,
                    &m.idle_dependency,
                    &m.idle_other,
                    &m.idle_loader,
                    &m.idle_host_loader,
                    &m.idle_sync_loader,
                    &m.loader,
                    &m.optimizer,
                    &m.sync,
                    &m.pageable_htod_ns,
                    &m.pageable_htod_count,
                    &m.pageable_htod_bytes,
                    &m.pinned_htod_count})
    *x /= n;
  return m;
}

}  // namespace

Facts buildFacts(const RunAnalysis& run, const DiagnosisInputs& in) {
  Facts f;
  double steps = 0;
  f.mean = meansOf(run, steps);
  f.steps = std::max(1.0, steps);
  f.ranks = static_cast<int>(run.ranks.size());
  f.ranking = rankBottlenecks(f.mean);
  f.groups = groupBottlenecks(f.ranking);
  f.job = run.job;
  for (const auto& r : run.ranks) {
    const RankTrace& t = *r.trace;
    // Each kernel name's kind, read once per name, as the replay reads it (-1: not yet read).
    std::vector<int8_t> kind_of_name(t.strings.size(), -1);
    for (uint32_t w : r.index.gpu_work) {
      const Event& e = t.events[w];
      if (e.kind != EventKind::kKernel) continue;
      int8_t& k = kind_of_name[e.name];
      if (k < 0) k = static_cast<int8_t>(precisionKindOf(t.strings.view(e.name)));
      const auto kind = static_cast<PrecisionKind>(k);
      const bool transpose = kind == PrecisionKind::kLayoutTranspose, nchw_bn = kind == PrecisionKind::kBatchNorm,
                 conv = kind == PrecisionKind::kConvolution, transform = kind == PrecisionKind::kTensorTransform;
      const int misaligned =
          w >= r.index.class_of_event.size() || !isGemm(r.index.class_of_event[w]) ? -1 : misalignedGemmIndex(kind);
      if (!transpose && !transform && !nchw_bn && !conv && misaligned < 0) continue;
      for (const auto& win : r.windows)
        if (e.start_ns >= win.begin_ns && e.start_ns < win.end_ns) {
          const double d = static_cast<double>(e.dur_ns);
          if (transpose) f.layout_transpose_ns += d;
          if (transform) f.tensor_transform_ns += d;
          if (nchw_bn) f.nchw_batch_norm_ns += d;
          if (conv) f.convolution_ns += d;
          if (misaligned >= 0) f.misaligned_gemm_ns[misaligned] += d, ++f.misaligned_gemms;
          break;
        }
    }
  }
  const auto& k = run.kernels;
  for (const auto& c : k.classes) f.class_ns[static_cast<size_t>(c.cls)] = static_cast<double>(c.dur.total_ns);
  f.kernel_ns = static_cast<double>(k.total_ns);
  f.compute_kernels = k.non_nccl.count;
  f.compute_kernel_p50_ns = k.non_nccl.p50_ns;
  f.fused_optimizer = k.fused_optimizer;
  f.collective_groups = run.collectives.size();
  for (const auto& c : run.collectives)
    f.collectives.push_back({c.bytes, c.dur.count, c.collective, static_cast<double>(c.dur.total_ns), c.dtype});
  if (!run.ranks.empty()) {
    const auto& d = run.ranks.front().trace->devices;
    if (!d.empty()) f.device_bytes = d.front().total_global_mem;
    // Without deviceProperties, the generation the kernel names prove (analysis/gpu_generation.h).
    GpuGeneration g = gpuGenerationOf(*run.ranks.front().trace);
    f.compute_major = g.compute_major;
    f.compute_major_note = std::move(g.note);
  }
  for (const RankAnalysis& r : run.ranks)
    f.host_own_work += r.host_work.per_step_ns / static_cast<double>(run.ranks.size());
  for (const RankAnalysis& r : run.ranks) {
    f.embedding.dense_tables += static_cast<double>(r.embedding.dense_backward) / f.steps;
    f.embedding.fill_ns += static_cast<double>(r.embedding.fill_ns) / f.steps;
    f.embedding.backward_ns += static_cast<double>(r.embedding.backward_gpu_ns) / f.steps;
    f.embedding.sparse_in_use |= r.embedding.sparse_backward > 0;
  }
  std::map<std::pair<int, int>, int> loop_shapes;  // (experts, ops per expert) -> forward loops
  for (const RankAnalysis& r : run.ranks)
    for (const MoeLoop& l : r.moe.loops) {
      f.moe.host_ns += static_cast<double>(l.end_ns - l.begin_ns);
      if (l.backward) continue;
      f.moe.layers += 1;
      f.moe.syncs += static_cast<double>(l.syncs);
      f.moe.sync_ns += static_cast<double>(l.sync_ns);
      ++loop_shapes[{l.experts, l.ops_per_expert}];
    }
  if (f.moe.layers > 0) {
    const auto common = std::max_element(loop_shapes.begin(), loop_shapes.end(),
                                         [](const auto& a, const auto& b) { return a.second < b.second; });
    f.moe.experts = common->first.first;
    f.moe.ops_per_expert = common->first.second;
    for (double* x : {&f.moe.layers, &f.moe.syncs, &f.moe.sync_ns, &f.moe.host_ns}) *x /= f.steps;
  }
  f.loader_in_process = std::any_of(run.ranks.begin(), run.ranks.end(),
                                    [](const RankAnalysis& r) { return r.index.loader_in_process > 0; });
  const auto& s = run.straggler;
  f.straggler.matched = s.matched;
  f.straggler.rank = s.straggler;
  f.straggler.share_last = s.straggler_share;
  f.straggler.share_of = s.share_of;
  f.straggler.note = s.note;
  f.straggler.others_wait_ns = static_cast<double>(s.others_wait_ns) /
                               std::max(1.0, f.steps / static_cast<double>(std::max<size_t>(1, run.ranks.size())));
  for (const auto& r : run.ranks) {
    const RankTrace* t = r.trace;
    if (t->rank == s.straggler && s.straggler >= 0) {
      double n = std::max<double>(1, r.steps.size());
      f.straggler.idle_host_ns = r.total.idle_host_ns / n;
      f.straggler.loader_ns = r.total.dataloader_ns / n;
    }
    f.profile_memory |= t->peak_allocated_bytes >= 0;
    if (t->peak_allocated_bytes >= 0 && !t->devices.empty()) {
      const DeviceProps* dev = &t->devices.front();
      for (const auto& d : t->devices)
        if (d.id == t->peak_device) dev = &d;
      if (dev->total_global_mem > 0) f.memory.push_back({t->rank, t->peak_allocated_bytes, dev->total_global_mem});
    }
    if (f.record_shapes && f.with_stack) continue;
    for (const auto& e : t->events) {
      f.record_shapes |= e.kind == EventKind::kHostOp && e.dtype != 0;
      f.with_stack |= e.kind == EventKind::kHostFunction;
      if (f.record_shapes && f.with_stack) break;
    }
  }
  if (in.nccl_env) {
    f.has_nccl_env = true;
    f.nccl_env = *in.nccl_env;
  }
  if (in.nccl_log) {
    f.has_nccl_log = true;
    f.nccl_log = *in.nccl_log;
  }
  return f;
}

}  // namespace gpudoctor
