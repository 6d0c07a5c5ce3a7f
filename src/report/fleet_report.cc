#include "report/fleet_report.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/thousands.h"
#include "report/diagnosis_json.h"
#include "report/fleet_json.h"
#include "report/style.h"
#include "report/text.h"

namespace gpudoctor {

namespace {
using nlohmann::ordered_json;

int64_t ns(double v) { return std::llround(v); }
double round4(double v) { return std::round(v * 1e4) / 1e4; }
std::string msText(double v) { return fmt::format("{:.3f}", v / 1e6); }
std::string stepName(int64_t n) { return n < 0 ? "the window" : fmt::format("step {}", n); }
}  // namespace

ordered_json fleetObject(const FleetReport& f) {
  ordered_json j;
  j["ranks"] = f.ranks;
  j["world_size"] = f.world_size;
  j["rank_steps"] = f.rank_steps;
  j["step_ns"] = ns(f.step_ns);
  j["median_step_ns"] = ns(f.median_step_ns);
  ordered_json slow = ordered_json::array();
  for (const auto& s : f.slow_ranks)
    slow.push_back({{"rank", s.rank},
                    {"steps_flagged", s.steps_flagged},
                    {"steps", s.steps},
                    {"excess_ns", ns(s.excess_ns)},
                    {"cause", s.cause},
                    {"straggler_of_groups", s.groups},
                    {"what_if",
                     {{"step_ns", ns(s.what_if_step_ns)},
                      {"speedup", s.what_if_step_ns > 0 ? round4(s.step_ns / s.what_if_step_ns) : 0.0},
                      {"basis", "the others stop waiting for it: the mean step minus its mean excess own time"}}}});
  j["slow_ranks"] = slow;
  ordered_json out = ordered_json::array();
  for (const auto& o : f.outliers)
    out.push_back({{"rank", o.rank},
                   {"step", o.step},
                   {"excess_ns", ns(o.excess_ns)},
                   {"step_median_own_ns", ns(o.median_ns)},
                   {"cause", o.cause}});
  j["step_outliers"] = out;
  ordered_json ss = ordered_json::array();
  for (const auto& s : f.slow_steps)
    ss.push_back({{"step", s.step}, {"wall_ns", ns(s.wall_ns)}, {"excess_ns", ns(s.excess_ns)}});
  j["slow_steps"] = ss;
  ordered_json st;
  st["known"] = f.stages.known;
  st["basis"] = f.stages.basis;
  ordered_json stages = ordered_json::array();
  for (const auto& s : f.stages.stages)
    stages.push_back({{"stage", s.stage}, {"ranks", s.ranks}, {"gpu_ns", ns(s.gpu_ns)}});
  st["stages"] = stages;
  st["slowest"] = f.stages.slowest;
  st["imbalance"] = round4(f.stages.imbalance);
  st["excess_ns"] = ns(f.stages.excess_ns);
  st["flagged"] = f.stages.flagged;
  st["note"] = f.stages.note;
  j["pipeline"] = st;
  ordered_json groups = ordered_json::array();
  for (const auto& g : f.groups)
    groups.push_back({{"name", g.name},
                      {"desc", g.desc},
                      {"members", g.members},
                      {"declared_members", g.declared},
                      {"matched", g.matched},
                      {"unmatched", g.unmatched},
                      {"straggler", g.straggler},
                      {"top_cause", g.top_cause},
                      {"cause_steps", round4(g.cause_steps)},
                      {"wait_share", round4(g.wait_share)},
                      {"wait_fraction", round4(g.wait_fraction)},
                      {"others_wait_ns", ns(g.others_wait_ns)},
                      {"note", g.note}});
  j["groups"] = groups;
  ordered_json rows = ordered_json::array();
  for (const auto& r : f.rows)
    rows.push_back({{"rank", r.rank},
                    {"steps", r.steps},
                    {"wall_ns", ns(r.wall_ns)},
                    {"own_ns", ns(r.own_ns)},
                    {"wait_ns", ns(r.wait_ns)},
                    {"nccl_ns", r.nccl_ns},
                    {"last_arrivals", r.last_arrivals}});
  j["per_rank"] = rows;
  ordered_json classes = ordered_json::array();
  for (const auto& c : f.classes) classes.push_back({{"class", c.name}, {"count", c.count}, {"total_ns", c.total_ns}});
  j["kernel_classes"] = classes;
  ordered_json job = ordered_json::array();
  for (const auto& [k, v] : f.job) job.push_back({k, v});
  j["job_summary"] = job;
  j["left_out"] = f.left_out;
  j["notes"] = f.notes;
  return j;
}

std::vector<std::string> fleetVerdicts(const FleetReport& f, size_t max_outliers) {
  std::vector<std::string> out;
  if (f.slow_ranks.empty() && f.outliers.empty() && f.slow_steps.empty() && !f.stages.flagged)
    out.emplace_back(f.ranks < 3 ? "no slow rank (outliers need three ranks or more)"
                                 : "no slow rank, no rank-step outlier, no slow step, no stage imbalance");
  for (const auto& s : f.slow_ranks) {
    std::string txt = fmt::format("slow rank {}: +{} ms of own time per step, in {} of {} steps: {}", s.rank,
                                  msText(s.excess_ns), s.steps_flagged, s.steps, s.cause);
    if (!s.groups.empty()) txt += fmt::format("; holds back group {}", fmt::join(s.groups, ", "));
    if (s.what_if_step_ns > 0)
      txt += fmt::format(". At its peers' median the step would be {} ms instead of {} ms ({:.2f}x)",
                         msText(s.what_if_step_ns), msText(s.step_ns), s.step_ns / s.what_if_step_ns);
    out.push_back(std::move(txt));
  }
  for (size_t k = 0; k < f.outliers.size() && k < max_outliers; ++k) {
    const auto& x = f.outliers[k];
    out.push_back(fmt::format("rank {}, {}: +{} ms over the step's median own time ({} ms): {}", x.rank,
                              stepName(x.step), msText(x.excess_ns), msText(x.median_ns), x.cause));
  }
  if (f.outliers.size() > max_outliers)
    out.push_back(
        fmt::format("... {} more rank-step outliers (--json lists them all)", f.outliers.size() - max_outliers));
  for (const auto& s : f.slow_steps)
    out.push_back(
        fmt::format("{} is slow on every rank: {} ms median, +{} ms over the median step (no single rank "
                    "explains it: a checkpoint, an evaluation, or a stall all ranks share)",
                    stepName(s.step), msText(s.wall_ns), msText(s.excess_ns)));
  out.push_back("pipeline: " + (f.stages.known ? f.stages.note : f.stages.basis));
  return out;
}

std::string renderFleetText(const FleetReport& f, size_t rows, bool color) {
  std::string o;
  o +=
      "\n" +
      paint("Across ranks (own time = step time minus waiting for other ranks in collectives)", Tone::kHeading, color) +
      "\n";
  for (const auto& v : fleetVerdicts(f))
    o += v.rfind("... ", 0) == 0 ? "  " + v + "\n" : wrapText(v, "  ", textWidth());
  if (!f.groups.empty()) {
    std::vector<const FleetGroup*> g;
    for (const auto& x : f.groups) g.push_back(&x);
    std::stable_sort(g.begin(), g.end(), [](auto* a, auto* b) { return a->wait_fraction > b->wait_fraction; });
    o += fmt::format("  {:<10} {:<24} {:>7} {:>8} {:>8}  {}\n", "group", "description", "members", "matched", "waiting",
                     "verdict");
    const size_t max_groups = 8;
    for (size_t k = 0; k < g.size() && k < max_groups; ++k) {
      std::string head = fmt::format("  {:<10} {:<24} {:>7} {:>8} {:>7.1f}%  ", g[k]->name.substr(0, 10),
                                     g[k]->desc.substr(0, 24), g[k]->members, g[k]->matched, 100 * g[k]->wait_fraction);
      std::string body = wrapText(g[k]->note, std::string(head.size(), ' '), textWidth());
      o += head + body.substr(head.size());
    }
    if (g.size() > max_groups)
      o += fmt::format("  ... {} more groups (--json lists them all)\n", g.size() - max_groups);
  }
  if (f.rows.size() > 1) {
    std::vector<const FleetRank*> r;
    for (const auto& x : f.rows) r.push_back(&x);
    std::stable_sort(r.begin(), r.end(), [](auto* a, auto* b) { return a->own_ns > b->own_ns; });
    o += fmt::format("  {} by own time per step (ms):\n",
                     r.size() > rows ? fmt::format("slowest {} of {} ranks", rows, r.size()) : std::string("ranks"));
    o += fmt::format("  {:>6} {:>6} {:>10} {:>10} {:>10}\n", "rank", "steps", "step", "own", "waiting");
    for (size_t k = 0; k < r.size() && k < rows; ++k)
      o += fmt::format("  {:>6} {:>6} {:>10} {:>10} {:>10}\n", r[k]->rank, r[k]->steps, msText(r[k]->wall_ns),
                       msText(r[k]->own_ns), msText(r[k]->wait_ns));
  }
  return o;
}

std::string renderFleetReport(const FleetReport& f, const FleetRunInfo& info, bool color, const FleetFindings& answer) {
  std::string o = paint(fmt::format("gpudoctor analyze: {} ranks{}, {} steps, mean step {} ms (median {} ms)", f.ranks,
                                    f.world_size > 0 ? fmt::format(" of {}", f.world_size) : std::string(),
                                    groupThousands(f.rank_steps), msText(f.step_ns), msText(f.median_step_ns)),
                        Tone::kHeading, color) +
                  "\n";
  if (!f.job.empty()) {
    std::string line;
    for (const auto& [k, v] : f.job) line += (line.empty() ? "" : ", ") + k + " " + v;
    o += wrapText("job: " + line, "  ", textWidth());
  }
  o += renderFocusText(answer, color);
  o += renderFleetText(f, 8, color);
  if (!f.classes.empty()) {
    int64_t total = 0;
    for (const auto& c : f.classes) total += c.total_ns;
    o += "\n" + paint("Kernel classes, all ranks (share of kernel time)", Tone::kHeading, color) + "\n";
    for (size_t k = 0; k < f.classes.size() && k < 8; ++k)
      o += fmt::format("  {:<22} {:>6.1f}%  {:>14} kernels\n", f.classes[k].name,
                       total ? 100.0 * static_cast<double>(f.classes[k].total_ns) / static_cast<double>(total) : 0.0,
                       groupThousands(f.classes[k].count));
  }
  if (!f.notes.empty()) {
    o += "\n" + paint("Notes", Tone::kHeading, color) + "\n";
    for (const auto& n : f.notes) o += wrapText(n, "  ", textWidth());
  }
  o += answer.diagnosis
           ? "\nPer-rank detail (each step, kernels, collectives): gpudoctor analyze on those ranks' "
             "traces.\n"
           : "\nPer-rank detail (breakdown, findings, what-if): gpudoctor analyze on one rank's trace, e.g. a "
             "slow rank's.\n";
  o += fmt::format(
      "read {} file{} ({} rank{}), {:.1f} MB in {:.2f} s ({:.1f} ranks/s, {:.1f} MB/s; {} process{} x {} "
      "thread{}); peak memory {:.0f} MB\n",
      info.files, info.files == 1 ? "" : "s", info.ranks, info.ranks == 1 ? "" : "s",
      static_cast<double>(info.bytes) / 1e6, info.seconds,
      info.seconds > 0 ? static_cast<double>(info.ranks) / info.seconds : 0.0,
      info.seconds > 0 ? static_cast<double>(info.bytes) / 1e6 / info.seconds : 0.0, info.processes,
      info.processes == 1 ? "" : "es", info.threads, info.threads == 1 ? "" : "s",
      static_cast<double>(info.peak_rss_bytes) / 1e6);
  return o;
}

std::string renderFleetJson(const FleetReport& f, const FleetRunInfo& info, const FleetFindings& answer) {
  ordered_json j;
  j["tool"] = "gpudoctor analyze";
  j["schema_version"] = 1;  // bumped when a field changes meaning or goes away
  j["version"] = GPUDOCTOR_VERSION;
  j["mode"] = "fleet";
  j["units"] = "times in integer nanoseconds (_ns), sizes in bytes, shares 0-1";
  j["definitions"] = {
      "own time: a rank's step wall time minus the time it waited in collectives; waiting in the k-th collective of "
      "a process group (matched by sequence number on every member) = own kernel duration − the shortest member's; "
      "the member with the shortest kernel arrived last and caused it.",
      "slow_ranks: own time over the step's median (over ranks) by more than max(5 % of the median step, 3 median "
      "absolute deviations) in at least half of a rank's steps (and two); step_outliers: the same for one rank in "
      "one step; slow_steps: a step whose median wall exceeds the median step by 10 % that no single rank explains.",
      "pipeline: stages from the pipeline-parallel groups of pg_config; gpu_ns = compute + exposed copies per step, "
      "median over the stage's ranks; imbalance = slowest / median stage − 1.",
      "groups: straggler = the member causing most of the waiting in at least 60 % of the steps while waiting is at "
      "least 5 % of the members' NCCL time."};
  j["timing"] = {{"files", info.files},
                 {"bytes", info.bytes},
                 {"seconds", info.seconds},
                 {"ranks", info.ranks},
                 {"ranks_per_second", info.seconds > 0 ? static_cast<double>(info.ranks) / info.seconds : 0.0},
                 {"mb_per_second", info.seconds > 0 ? static_cast<double>(info.bytes) / 1e6 / info.seconds : 0.0},
                 {"peak_rss_bytes", info.peak_rss_bytes},
                 {"processes", info.processes},
                 {"threads", info.threads}};
  j["fleet"] = fleetObject(f);
  if (answer.focus) {
    j["analyzed_in_full"] = focusObject(answer);
    j["diagnosis"] = answer.diagnosis ? diagnosisJson(*answer.diagnosis, answer.thresholds) : ordered_json(nullptr);
  }
  return j.dump(1, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace gpudoctor
