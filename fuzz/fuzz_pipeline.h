// What every trace fuzz target runs once a reader has parsed its input: the whole analysis, the
// replay (unedited and with every edit), the diagnosis with its what-if and plan, and rendering.
// Any crash, hang, leak or UB report is a bug.
#pragma once
#include <cstdio>
#include <utility>
#include <vector>

#include "analysis/digest.h"
#include "analysis/fleet.h"
#include "analysis/replay/replay.h"
#include "analysis/run_analysis.h"
#include "diagnosis/diagnosis.h"
#include "report/fleet_report.h"
#include "report/html_report.h"
#include "report/json_report.h"
#include "report/terminal.h"
#include "sources/summary/summary_file.h"

namespace gpudoctor {

inline void fuzzPipeline(RankTrace&& trace) {
  if (trace.rank < 0) trace.rank = 0;  // as readTraceSet and the streaming mode number a rank without one
  std::vector<RankTrace> traces;
  traces.push_back(std::move(trace));
  AnalysisOptions aopt;
  aopt.threads = 1;
  auto run = analyzeRun(traces, aopt);
  if (!run.ok()) return;
  // The replay: unedited, and with every kind of edit (never a crash, whatever the trace's clocks).
  {
    ReplayModel model(run.value());
    ReplayEdits ed;
    ed.kernel_scale.fill(0.5);
    ed.kernel_floor_ns.fill(3000);
    ed.kernel_add_ns.fill(2000);
    ed.memcpy_scale = 0;
    ed.host_event_overhead_ns = 12000;
    ed.api_call_overhead_ns = 1000;
    ed.gpu_gap_overhead_ns = 1400;
    ed.graph_node_overhead_ns = 2000;
    ed.graph_gap_cap_ns = 3000;
    ed.autocast_cast_ns = 17500;  // autocast's casts on the host (not graphed: `all` frees the launches)
    ed.fused_attention_fp32_scale = 0.1;
    ReplayEdits all = ed;
    all.loader_off_thread = all.drop_sync_waits = all.free_launches = all.fused_optimizer = true;
    all.optimizer_gpu_scale = 0.28;
    all.rank_compute_scale = {0.5};
    all.rank_host_scale = {0.5};
    all.fused_attention = all.drop_recompute = all.graph_keeps_optimizer = true;
    all.attention_gemm_scale = 0.5;
    all.checkpoint_block_ns = 1000000;
    all.pageable_htod_scale = 0.1;
    ReplayEdits merge = ed;  // gradient accumulation merged, alone (its own host-span path)
    merge.micro_batch_merge = 4;
    merge.merge_kernel_fixed_ns = 3000;
    merge.free_launches = merge.graph_keeps_optimizer = true;
    (void)model.replayAll({ReplayEdits{}, ed, all, merge}, 1);
  }
  // The rest of the pipeline too: diagnosis and every renderer.
  Thresholds th = Thresholds::defaults();
  Diagnosis d = diagnose(run.value(), th);
  (void)renderTerminal(run.value(), {});
  (void)renderJson(run.value(), 0, &d, &th);
  (void)renderHtml(run.value(), d);
  // The many-rank path: the digest, its summary round trip, the cross-rank analyses and reports.
  std::vector<RankDigest> digests;
  for (const auto& r : run.value().ranks) digests.push_back(digestRank(r));
  auto back = parseSummaryText(summaryDocument(digests), "fuzz.gdsum");
  if (!back.ok()) {  // what the writer writes, the reader must read
    std::fprintf(stderr, "summary round trip refused: %s\n", back.error().message.c_str());
    __builtin_trap();
  }
  if (auto fleet = analyzeFleet(back.value()); fleet.ok()) {
    (void)renderFleetReport(fleet.value(), {});
    (void)renderFleetJson(fleet.value(), {});
  }
}

}  // namespace gpudoctor
