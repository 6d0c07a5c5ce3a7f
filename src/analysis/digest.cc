#include "analysis/digest.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "analysis/kernel_class.h"

namespace gpudoctor {

StepFigures stepFigures(const StepBreakdown& b) {
  return {b.window.annotated ? b.window.number : -1,
          b.wall_ns,
          b.compute_ns,
          b.comm_exposed_ns,
          b.copy_exposed_ns,
          b.idle_host_ns,
          b.idle_sync_ns,
          b.idle_dependency_ns,
          b.idle_other_ns,
          b.idle_host_in_loader_ns,
          b.idle_sync_in_loader_ns};
}

namespace {
// "[0, 1, 5]" -> {0, 1, 5}; empty when the text is not such a list.
std::vector<int> parseRankList(std::string_view s) {
  std::vector<int> out;
  if (s.size() < 2 || s.front() != '[' || s.back() != ']') return {};
  long long v = -1;
  for (char c : s.substr(1)) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      v = (v < 0 ? 0 : v) * 10 + (c - '0');
      if (v > INT32_MAX) return {};
    } else if (c == ',' || c == ']') {
      if (v < 0) return out.empty() && c == ']' ? out : std::vector<int>{};
      out.push_back(static_cast<int>(v));
      v = -1;
    } else if (c != ' ') {
      return {};
    }
  }
  return out;
}
}  // namespace

RankDigest digestRank(const RankAnalysis& ra) {
  const RankTrace& t = *ra.trace;
  const TraceIndex& idx = ra.index;
  RankDigest d;
  d.rank = t.rank;
  d.world_size = t.world_size > 0 ? t.world_size : -1;  // a trace's 0 or negative world size: unknown
  d.path = t.path;
  if (!t.devices.empty()) d.device = internText(t.devices.front().name);
  d.input_bytes = t.stats.input_bytes;
  for (const auto& b : ra.steps) d.steps.push_back(stepFigures(b));
  // The groups pg_config lists with this rank in them (a pipeline group has no collective in a
  // trace without point-to-point sends, yet names the rank's stage).
  for (const auto& pg : t.process_groups)
    if (auto at = std::find(pg.ranks.begin(), pg.ranks.end(), t.rank); at != pg.ranks.end())
      d.groups.push_back(
          {pg.name, internText(pg.desc), static_cast<int>(pg.ranks.size()), static_cast<int>(at - pg.ranks.begin())});
  std::map<uint32_t, uint32_t> group_of;  // interned key -> index into d.groups
  const auto& ev = t.events;
  for (uint32_t s = 0; s < ra.windows.size(); ++s) {
    const StepWindow& w = ra.windows[s];
    // Collectives launched inside the step, as the straggler matching counts them.
    for (auto it = idx.firstStartingAt(idx.launches, w.begin_ns);
         it != idx.launches.end() && ev[*it].start_ns < w.end_ns; ++it) {
      uint32_t wk = idx.work_of.find(ev[*it].correlation);
      if (wk == IdMap::kNone) continue;
      const Event& g = ev[wk];
      if (g.kind != EventKind::kKernel || g.collective == 0) continue;
      const Collective& c = t.collectives[g.collective - 1];
      if (c.process_group == 0 || c.seq < 0 || c.seq > UINT32_MAX) continue;
      auto at = group_of.find(c.process_group);
      if (at == group_of.end()) {
        std::string_view key = t.strings.view(c.process_group);
        uint32_t gi = 0;
        while (gi < d.groups.size() && d.groups[gi].name != key) ++gi;
        if (gi == d.groups.size()) {
          auto members = parseRankList(t.strings.view(c.pg_ranks));
          auto me = std::find(members.begin(), members.end(), t.rank);
          d.groups.push_back({std::string(key), "", static_cast<int>(members.size()),
                              me == members.end() ? -1 : static_cast<int>(me - members.begin())});
        }
        at = group_of.emplace(c.process_group, gi).first;
      }
      d.collectives.push_back({at->second, static_cast<uint32_t>(c.seq), s, g.dur_ns});
    }
  }
  std::sort(d.collectives.begin(), d.collectives.end(), [](const DigestCollective& a, const DigestCollective& b) {
    return a.group != b.group ? a.group < b.group : a.seq < b.seq;
  });
  for (const auto& c : ra.kernels.classes)
    d.classes.push_back({internText(kernelClassName(c.cls)), c.dur.count, c.dur.total_ns});
  setJob(d, jobFields(ra.job));
  // Thousands of digests stay in memory: no growth slack.
  d.steps.shrink_to_fit();
  d.groups.shrink_to_fit();
  d.collectives.shrink_to_fit();
  d.classes.shrink_to_fit();
  return d;
}

RankDigest digestLeftOut(const LeftOutRank& l, int world_size) {
  RankDigest d;
  d.rank = l.rank;
  d.world_size = world_size;
  d.path = l.path;
  d.left_out = internText(l.reason);
  return d;
}

}  // namespace gpudoctor
