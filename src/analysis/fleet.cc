#include "analysis/fleet.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "common/numeric_check.h"

namespace gpudoctor {

namespace {

// The ranking's categories a rank's own time is made of (exposed communication excluded: it is
// mostly waiting), with the words the report uses for a category that grew.
constexpr size_t kCauses = 7;
constexpr std::array<const char*, kCauses> kCauseText = {
    "more GPU compute than its peers (a longer or larger batch: sequence-length or batch imbalance, or a slower GPU)",
    "exposed copies",
    "the GPU waiting for the host to launch work (a host pause: Python garbage collection, logging, a checkpoint)",
    "the GPU waiting for a host synchronization",
    "the GPU waiting on another stream",
    "the GPU idle after its work (the host busy elsewhere)",
    "data loading on the training thread",
};
std::array<double, kCauses> causesOf(const StepFigures& s) {
  return {static_cast<double>(s.compute),
          static_cast<double>(s.copies),
          static_cast<double>(s.idle_host - s.idle_host_loader),
          static_cast<double>(s.idle_sync - s.idle_sync_loader),
          static_cast<double>(s.idle_dependency),
          static_cast<double>(s.idle_other),
          static_cast<double>(s.idle_host_loader + s.idle_sync_loader)};
}
// The category that grew most from `base` to `now`.
std::string grownCause(const std::array<double, kCauses>& now, const std::array<double, kCauses>& base) {
  size_t best = 0;
  for (size_t k = 1; k < kCauses; ++k)
    if (now[k] - base[k] > now[best] - base[best]) best = k;
  return kCauseText[best];
}
std::array<double, kCauses> medianCauses(const std::vector<std::array<double, kCauses>>& v) {
  std::array<double, kCauses> m{};
  for (size_t k = 0; k < kCauses; ++k) {
    std::vector<double> col;
    for (const auto& a : v) col.push_back(a[k]);
    m[k] = median(std::move(col));
  }
  return m;
}

bool isPipelineGroup(const DigestGroup& g) {
  std::string d;
  for (char c : g.desc) d += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return d.find("pipe") != std::string::npos || d == "pp" || d.rfind("pp_", 0) == 0;
}

std::string rankList(const std::vector<int>& r) {
  if (r.empty()) return "";
  bool contiguous = true;
  for (size_t i = 1; i < r.size(); ++i) contiguous &= r[i] == r[i - 1] + 1;
  if (contiguous && r.size() > 2) return fmt::format("{}-{}", r.front(), r.back());
  if (r.size() <= 6) return fmt::format("{}", fmt::join(r, ", "));
  return fmt::format("{}, {}, ... {} ({} ranks)", r[0], r[1], r.back(), r.size());
}

std::string ms(double ns) { return fmt::format("{:.3f} ms", ns / 1e6); }

}  // namespace

std::vector<int> missingRanks(const std::vector<RankDigest>& digests) {
  int world = -1;
  for (const auto& d : digests) world = std::max(world, d.world_size);
  if (world <= 0) return {};
  std::vector<char> seen(static_cast<size_t>(world), 0);
  for (const auto& d : digests)
    if (d.rank >= 0 && d.rank < world) seen[static_cast<size_t>(d.rank)] = 1;
  std::vector<int> out;
  for (int r = 0; r < world; ++r)
    if (!seen[static_cast<size_t>(r)]) out.push_back(r);
  return out;
}

namespace {

// What the cross-rank analyses share: the ranks with steps (in rank order), each rank's waiting in
// collectives per step, its pipeline stage, the medians its steps are judged against and which of
// its steps stand out.
struct Fleet {
  const FleetOptions& opt;
  std::vector<const RankDigest*> ranks;
  size_t n = 0;
  std::vector<std::vector<double>> wait;  // per rank and step: waiting in collectives
  std::vector<int64_t> nccl, last_arrivals;
  std::vector<int> stage_of;                       // per rank; -1: no pipeline group
  std::map<int, std::vector<size_t>> stage_ranks;  // stage -> ranks
  size_t staged = 0;
  int stage_count = 0;
  std::map<int64_t, double> step_median_wall;                 // step number -> median wall over ranks
  std::map<std::pair<int, int64_t>, double> step_median_own;  // (peers, number) -> median own time
  std::map<std::pair<int, int64_t>, std::vector<std::pair<size_t, size_t>>> by_peer_step;  // -> (rank, step index)
  std::vector<std::vector<char>> flagged;                  // per rank and step: its own time stands out
  std::vector<std::array<double, kCauses>> rank_means;     // per rank: mean causes per step
  std::map<int, std::array<double, kCauses>> peer_causes;  // peers -> median of their ranks' means
  std::vector<char> slow;                                  // per rank: a slow rank

  Fleet(const FleetOptions& o, std::vector<const RankDigest*> r) : opt(o), ranks(std::move(r)), n(ranks.size()) {}
  // Ranks are judged against their peers: the ranks of their pipeline stage (stages do different
  // work), all ranks when stages are unknown.
  int peerOf(size_t i) const { return stage_ranks.size() >= 2 ? stage_of[i] : 0; }
  // A cell's own time over its step's median own time among its peers.
  double ownExcess(size_t i, size_t j) {
    return static_cast<double>(ranks[i]->steps[j].wall) - wait[i][j] -
           step_median_own[{peerOf(i), ranks[i]->steps[j].number}];
  }
};

// The digests in rank order, without the ranks that have no steps (listed in rep.left_out); an
// error when two claim one rank or none has steps.
Result<std::vector<const RankDigest*>> ranksWithSteps(const std::vector<RankDigest>& digests, FleetReport& rep) {
  std::vector<const RankDigest*> sorted;
  for (const auto& d : digests) sorted.push_back(&d);
  std::sort(sorted.begin(), sorted.end(), [](const RankDigest* a, const RankDigest* b) {
    return a->rank != b->rank ? a->rank < b->rank : a->path < b->path;
  });
  for (size_t i = 1; i < sorted.size(); ++i)
    if (sorted[i]->rank == sorted[i - 1]->rank)
      return Error{fmt::format("rank {} appears twice ({} and {}): one trace or summary per rank", sorted[i]->rank,
                               sorted[i - 1]->path, sorted[i]->path)};
  std::vector<const RankDigest*> ranks;
  for (const RankDigest* d : sorted) {
    rep.world_size = std::max(rep.world_size, d->world_size);
    if (!d->left_out.empty() || d->steps.empty()) {
      rep.left_out.push_back(
          fmt::format("rank {} ({}): {}", d->rank, d->path, d->left_out.empty() ? "no steps" : d->left_out));
      continue;
    }
    ranks.push_back(d);
  }
  if (ranks.empty()) return Error{"no rank has steps to analyze (every rank was left out)"};
  return ranks;
}

// One rank's collectives of one group (a run of its collectives, which come grouped).
struct Member {
  size_t rank;  // index into ranks
  const DigestCollective* begin;
  const DigestCollective* end;
};

// Each group's members, by group name, and the group's description (the first member's that knows
// its size).
struct GroupMembers {
  std::map<std::string, std::vector<Member>> members;
  std::map<std::string, const DigestGroup*> info;
};

GroupMembers groupMembers(const Fleet& f) {
  GroupMembers gm;
  for (size_t i = 0; i < f.n; ++i) {
    const auto& cs = f.ranks[i]->collectives;
    for (size_t a = 0; a < cs.size();) {
      size_t b = a;
      while (b < cs.size() && cs[b].group == cs[a].group) ++b;
      const DigestGroup& g = f.ranks[i]->groups[cs[a].group];
      gm.members[g.name].push_back({i, cs.data() + a, cs.data() + b});
      auto& info = gm.info[g.name];
      if (!info || (info->size == 0 && g.size > 0)) info = &g;
      a = b;
    }
  }
  return gm;
}

// Who made a group's members wait: per member (index into its members), in all and per step number.
struct GroupWaits {
  std::map<int64_t, std::map<size_t, double>> caused_in_step;  // step number -> cause member -> wait
  std::map<size_t, double> caused;
  double total_wait = 0, total_nccl = 0;
};

// Matches a group's collectives on every member by sequence number: each member waited its own
// duration minus the shortest, for the member with the shortest (the last to arrive). Adds to the
// ranks' waiting, NCCL time and last arrivals; sets fg's matched, unmatched and wait fraction.
GroupWaits matchGroup(Fleet& f, const std::vector<Member>& mem, FleetGroup& fg) {
  GroupWaits gw;
  std::vector<const DigestCollective*> cur(mem.size());
  int64_t most = 0;
  for (size_t k = 0; k < mem.size(); ++k) {
    cur[k] = mem[k].begin;
    most = std::max<int64_t>(most, mem[k].end - mem[k].begin);
  }
  std::vector<int64_t> dur(mem.size());
  for (const DigestCollective* c = mem[0].begin; c != mem[0].end; ++c) {
    bool all = true;
    for (size_t k = 1; k < mem.size() && all; ++k) {
      while (cur[k] != mem[k].end && cur[k]->seq < c->seq) ++cur[k];
      all = cur[k] != mem[k].end && cur[k]->seq == c->seq;
    }
    if (!all) continue;
    cur[0] = c;
    ++fg.matched;
    size_t last = 0;
    for (size_t k = 0; k < mem.size(); ++k) {
      dur[k] = cur[k]->dur_ns;
      if (dur[k] < dur[last]) last = k;
    }
    double w = 0;
    for (size_t k = 0; k < mem.size(); ++k) {
      double wk = static_cast<double>(dur[k] - dur[last]);
      f.wait[mem[k].rank][cur[k]->step] += wk;
      f.nccl[mem[k].rank] += dur[k];
      w += wk;
      gw.total_nccl += static_cast<double>(dur[k]);
    }
    gw.total_wait += w;
    if (w > 0) {
      ++f.last_arrivals[mem[last].rank];
      gw.caused[last] += w;
      gw.caused_in_step[f.ranks[mem[last].rank]->steps[cur[last]->step].number][last] += w;
    }
  }
  fg.unmatched = most - fg.matched;
  fg.wait_fraction = gw.total_nccl > 0 ? gw.total_wait / gw.total_nccl : 0;
  return gw;
}

// The member that caused most of a group's waiting, in how many steps it led, and whether that
// makes it the group's straggler; the group's note.
void judgeGroup(const Fleet& f, const std::vector<Member>& mem, GroupWaits& gw, FleetGroup& fg) {
  if (mem.size() < 2) {
    fg.note = "one member in the traces: nothing to match";
  } else if (fg.matched == 0) {
    fg.note = "no collective is seen on every member: nothing to match";
  } else if (gw.caused.empty()) {
    fg.note = fmt::format("{} collectives matched; no member waited for another", fg.matched);
  } else {
    auto& caused = gw.caused;
    size_t top = caused.begin()->first;
    for (const auto& [k, w] : caused)
      if (w > caused[top]) top = k;
    int64_t steps = 0, led = 0;
    for (const auto& [step, by] : gw.caused_in_step) {
      ++steps;
      size_t lead = by.begin()->first;
      for (const auto& [k, w] : by)
        if (w > by.at(lead)) lead = k;
      led += lead == top;
    }
    std::set<int64_t> step_numbers;
    for (const auto& m : mem)
      for (const auto& s : f.ranks[m.rank]->steps) step_numbers.insert(s.number);
    steps = std::max<int64_t>(steps, static_cast<int64_t>(step_numbers.size()));
    fg.top_cause = f.ranks[mem[top].rank]->rank;
    fg.cause_steps = steps ? static_cast<double>(led) / static_cast<double>(steps) : 0;
    fg.wait_share = caused[top] / gw.total_wait;
    double member_steps = 0;
    for (const auto& m : mem)
      if (m.rank != mem[top].rank) member_steps += static_cast<double>(f.ranks[m.rank]->steps.size());
    fg.others_wait_ns = member_steps > 0 ? caused[top] / member_steps : 0;
    if (fg.cause_steps >= f.opt.straggler_steps_min && fg.wait_fraction >= f.opt.straggler_wait_min) {
      fg.straggler = fg.top_cause;
      fg.note = fmt::format(
          "rank {} holds the group back: it causes most of the waiting in {:.0f}% of the steps "
          "({:.0f}% of all waiting; the others wait {} per step for it, {:.0f}% of their NCCL time "
          "is waiting)",
          fg.straggler, 100 * fg.cause_steps, 100 * fg.wait_share, ms(fg.others_wait_ns), 100 * fg.wait_fraction);
    } else {
      fg.note = fmt::format(
          "no consistent straggler (rank {} causes most waiting, in {:.0f}% of the steps; "
          "waiting is {:.0f}% of the members' NCCL time)",
          fg.top_cause, 100 * fg.cause_steps, 100 * fg.wait_fraction);
    }
  }
}

// Waiting in collectives, per rank and step, from each group's collectives matched by sequence
// number; one FleetGroup per group, by name.
void matchCollectives(Fleet& f, FleetReport& rep) {
  f.wait.resize(f.n);
  f.nccl.assign(f.n, 0);
  f.last_arrivals.assign(f.n, 0);
  for (size_t i = 0; i < f.n; ++i) f.wait[i].assign(f.ranks[i]->steps.size(), 0);
  GroupMembers gm = groupMembers(f);
  for (auto& [name, mem] : gm.members) {
    FleetGroup fg;
    fg.name = name;
    fg.desc = std::string(gm.info[name]->desc);
    fg.members = static_cast<int>(mem.size());
    fg.declared = gm.info[name]->size;
    GroupWaits gw = matchGroup(f, mem, fg);
    judgeGroup(f, mem, gw, fg);
    if (fg.declared > fg.members)
      fg.note += fmt::format("; {} of its {} ranks are in the traces", fg.members, fg.declared);
    rep.groups.push_back(std::move(fg));
  }
}

// Pipeline stages from the pipeline groups: a rank's stage is its place in its first pipeline group.
void assignStages(Fleet& f) {
  f.stage_of.assign(f.n, -1);
  for (size_t i = 0; i < f.n; ++i)
    for (const auto& g : f.ranks[i]->groups) {
      if (!isPipelineGroup(g)) continue;
      if (g.position < 0) continue;
      f.stage_ranks[g.position].push_back(i);
      f.stage_of[i] = g.position;
      f.stage_count = std::max(f.stage_count, g.size);
      ++f.staged;
      break;
    }
}

// Own time per rank and step (one row per rank); the steps by number, and each step's median wall
// and, among each rank's peers, median own time.
void ownTimes(Fleet& f, FleetReport& rep) {
  std::map<int64_t, std::vector<std::pair<size_t, size_t>>> by_step;  // number -> (rank, step index)
  double wall_sum = 0;
  for (size_t i = 0; i < f.n; ++i) {
    FleetRank row;
    row.rank = f.ranks[i]->rank;
    row.steps = static_cast<int64_t>(f.ranks[i]->steps.size());
    for (size_t j = 0; j < f.ranks[i]->steps.size(); ++j) {
      const auto& s = f.ranks[i]->steps[j];
      row.wall_ns += static_cast<double>(s.wall);
      row.wait_ns += f.wait[i][j];
      by_step[s.number].push_back({i, j});
      f.by_peer_step[{f.peerOf(i), s.number}].push_back({i, j});
    }
    wall_sum += row.wall_ns;
    rep.rank_steps += row.steps;
    row.own_ns = (row.wall_ns - row.wait_ns) / static_cast<double>(row.steps);
    row.wall_ns /= static_cast<double>(row.steps);
    row.wait_ns /= static_cast<double>(row.steps);
    row.nccl_ns = f.nccl[i];
    row.last_arrivals = f.last_arrivals[i];
    rep.rows.push_back(row);
  }
  rep.step_ns = wall_sum / static_cast<double>(rep.rank_steps);
  std::vector<double> medians;
  for (const auto& [num, cells] : by_step) {
    std::vector<double> w;
    for (auto [i, j] : cells) w.push_back(static_cast<double>(f.ranks[i]->steps[j].wall));
    f.step_median_wall[num] = median(w);
    medians.push_back(f.step_median_wall[num]);
  }
  for (const auto& [key, cells] : f.by_peer_step) {
    std::vector<double> o;
    for (auto [i, j] : cells) o.push_back(static_cast<double>(f.ranks[i]->steps[j].wall) - f.wait[i][j]);
    f.step_median_own[key] = median(o);
  }
  rep.median_step_ns = median(std::move(medians));
}

// Cells whose own time stands out from their step's: robust to noise (three median absolute
// deviations) and to tiny steps (a share of the median step).
void flagCells(Fleet& f, const FleetReport& rep) {
  f.flagged.resize(f.n);
  for (size_t i = 0; i < f.n; ++i) f.flagged[i].assign(f.ranks[i]->steps.size(), 0);
  for (const auto& [key, cells] : f.by_peer_step) {
    if (cells.size() < 3) continue;  // two ranks cannot say which one is off
    std::vector<double> dev;
    for (auto [i, j] : cells) dev.push_back(std::abs(f.ownExcess(i, j)));
    double t = std::max(f.opt.outlier_min * rep.median_step_ns, 3 * median(std::move(dev)));
    for (auto [i, j] : cells)
      if (f.ownExcess(i, j) > t) f.flagged[i][j] = 1;
  }
}

// Each rank's mean causes per step, and the median of those means over each set of peers.
void rankCauses(Fleet& f) {
  f.rank_means.resize(f.n);
  for (size_t i = 0; i < f.n; ++i) {
    for (const auto& s : f.ranks[i]->steps) {
      auto c = causesOf(s);
      for (size_t k = 0; k < kCauses; ++k) f.rank_means[i][k] += c[k] / static_cast<double>(f.ranks[i]->steps.size());
    }
  }
  std::map<int, std::vector<std::array<double, kCauses>>> peer_means;
  for (size_t i = 0; i < f.n; ++i) peer_means[f.peerOf(i)].push_back(f.rank_means[i]);
  for (const auto& [p, v] : peer_means) f.peer_causes[p] = medianCauses(v);
}

// Slow ranks: outliers in most of their steps; largest excess first.
void findSlowRanks(Fleet& f, FleetReport& rep) {
  f.slow.assign(f.n, 0);
  for (size_t i = 0; i < f.n; ++i) {
    int64_t flagged = 0;
    double excess = 0;
    for (size_t j = 0; j < f.ranks[i]->steps.size(); ++j) {
      flagged += f.flagged[i][j];
      excess += f.ownExcess(i, j);
    }
    auto steps = static_cast<int64_t>(f.ranks[i]->steps.size());
    if (flagged < 2 || static_cast<double>(flagged) < f.opt.slow_rank_steps_min * static_cast<double>(steps)) continue;
    f.slow[i] = 1;
    SlowRank sr;
    sr.rank = f.ranks[i]->rank;
    sr.steps_flagged = flagged;
    sr.steps = steps;
    sr.excess_ns = excess / static_cast<double>(steps);
    sr.cause = grownCause(f.rank_means[i], f.peer_causes[f.peerOf(i)]);
    for (const auto& g : rep.groups)
      if (g.straggler == sr.rank) sr.groups.push_back(g.name);
    sr.step_ns = rep.step_ns;
    sr.what_if_step_ns = std::max(0.0, rep.step_ns - sr.excess_ns);
    rep.slow_ranks.push_back(std::move(sr));
  }
  std::sort(rep.slow_ranks.begin(), rep.slow_ranks.end(), [](const SlowRank& a, const SlowRank& b) {
    return a.excess_ns != b.excess_ns ? a.excess_ns > b.excess_ns : a.rank < b.rank;
  });
}

// Outliers of the other ranks: one rank, one step; the cause against the rank's own other steps.
void findOutliers(Fleet& f, FleetReport& rep) {
  for (size_t i = 0; i < f.n; ++i) {
    if (f.slow[i]) continue;
    for (size_t j = 0; j < f.ranks[i]->steps.size(); ++j) {
      if (!f.flagged[i][j]) continue;
      const auto& s = f.ranks[i]->steps[j];
      std::vector<std::array<double, kCauses>> others;
      for (size_t k = 0; k < f.ranks[i]->steps.size(); ++k)
        if (!f.flagged[i][k]) others.push_back(causesOf(f.ranks[i]->steps[k]));
      if (others.empty()) others.push_back(f.peer_causes[f.peerOf(i)]);
      StepOutlier o;
      o.rank = f.ranks[i]->rank;
      o.step = s.number;
      o.excess_ns = f.ownExcess(i, j);
      o.median_ns = static_cast<double>(s.wall) - f.wait[i][j] - o.excess_ns;
      o.cause = grownCause(causesOf(s), medianCauses(others));
      rep.outliers.push_back(std::move(o));
    }
  }
  std::sort(rep.outliers.begin(), rep.outliers.end(), [](const StepOutlier& a, const StepOutlier& b) {
    if (a.excess_ns != b.excess_ns) return a.excess_ns > b.excess_ns;
    return a.rank != b.rank ? a.rank < b.rank : a.step < b.step;
  });
}

// Steps slow on every rank that no single rank explains.
void findSlowSteps(const Fleet& f, FleetReport& rep) {
  for (const auto& [num, w] : f.step_median_wall) {
    double excess = w - rep.median_step_ns;
    if (excess < f.opt.slow_step_min * rep.median_step_ns) continue;
    double explained = 0;
    for (const auto& o : rep.outliers)
      if (o.step == num) explained = std::max(explained, o.excess_ns);
    for (const auto& sr : rep.slow_ranks) explained = std::max(explained, sr.excess_ns);
    if (explained >= excess / 2) continue;
    rep.slow_steps.push_back({num, w, excess});
  }
}

// The pipeline's stages: each stage's GPU work per step, the slowest against the median stage.
void reportStages(const Fleet& f, StageReport& st) {
  if (f.stage_ranks.size() < 2) {
    st.basis = f.stage_ranks.empty() ? "no pipeline-parallel group in the traces' process groups (pg_config: a "
                                       "description containing \"pipe\")"
                                     : "one pipeline stage in the traces";
    return;
  }
  st.known = true;
  st.basis = fmt::format(
      "{} stages from the pipeline-parallel groups of pg_config (a rank's stage: its place in "
      "its group); GPU work per step = compute + exposed copies, median over the stage's ranks",
      f.stage_count);
  if (f.staged < f.n) st.basis += fmt::format("; {} of {} ranks have no pipeline group", f.n - f.staged, f.n);
  std::vector<double> values;
  for (const auto& [stage, idx] : f.stage_ranks) {
    FleetStage fs;
    fs.stage = stage;
    std::vector<double> v;
    for (size_t i : idx) {
      fs.ranks.push_back(f.ranks[i]->rank);
      v.push_back(f.rank_means[i][0] + f.rank_means[i][1]);
    }
    fs.gpu_ns = median(std::move(v));
    values.push_back(fs.gpu_ns);
    st.stages.push_back(std::move(fs));
  }
  double med = median(values);
  size_t worst = 0;
  for (size_t k = 1; k < st.stages.size(); ++k)
    if (st.stages[k].gpu_ns > st.stages[worst].gpu_ns) worst = k;
  st.slowest = st.stages[worst].stage;
  st.excess_ns = st.stages[worst].gpu_ns - med;
  st.imbalance = med > 0 ? st.stages[worst].gpu_ns / med - 1 : 0;
  st.flagged = st.imbalance >= f.opt.stage_imbalance_min;
  st.note = st.flagged ? fmt::format(
                             "stage {} (ranks {}) does {} of GPU work per step, {:.0f}% more than the median stage "
                             "({}); the pipeline runs at its slowest stage's pace: move layers off stage {} (up to {} "
                             "per step)",
                             st.slowest, rankList(st.stages[worst].ranks), ms(st.stages[worst].gpu_ns),
                             100 * st.imbalance, ms(med), st.slowest, ms(st.excess_ns))
                       : fmt::format(
                             "stages balanced: the slowest, stage {}, does {:.1f}% more GPU work per step than the "
                             "median stage",
                             st.slowest, 100 * st.imbalance);
}

// The kernel classes summed over the ranks, largest first.
void sumClasses(const std::vector<const RankDigest*>& ranks, FleetReport& rep) {
  std::map<std::string, TimeTotal> classes;
  for (const auto* d : ranks)
    for (const auto& c : d->classes) {
      auto& t = classes[std::string(c.name)];
      t.name = c.name;
      t.count += c.count;
      t.total_ns += c.total_ns;
    }

  for (auto& [name, t] : classes) rep.classes.push_back(t);
  std::sort(rep.classes.begin(), rep.classes.end(), [](const TimeTotal& a, const TimeTotal& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
}

// The job profile: each field's most common value; ranks that differ are named.
void jobConsensus(const std::vector<const RankDigest*>& ranks, FleetReport& rep) {
  std::vector<std::string> field_order;
  std::map<std::string, std::map<std::string, std::vector<int>>> values;  // field -> value -> ranks
  for (const auto* d : ranks)
    for (auto& [k, v] : jobPairs(*d)) {
      if (!values.count(k)) field_order.push_back(k);
      values[k][v].push_back(d->rank);
    }
  for (const auto& k : field_order) {
    const auto& by = values[k];
    auto best = by.begin();
    for (auto it = by.begin(); it != by.end(); ++it)
      if (it->second.size() > best->second.size()) best = it;
    rep.job.emplace_back(k, best->first);
    for (const auto& [v, who] : by)
      if (v != best->first)
        rep.notes.push_back(fmt::format("job profile: {} is \"{}\" on rank{} {} (\"{}\" on {} other ranks)", k, v,
                                        who.size() == 1 ? "" : "s", rankList(who), best->first, best->second.size()));
  }
}

// What the figures leave out: ranks left out or missing, collectives not matched.
void coverageNotes(const std::vector<RankDigest>& digests, FleetReport& rep) {
  for (const auto& l : rep.left_out) rep.notes.push_back("left out: " + l);
  if (auto missing = missingRanks(digests); !missing.empty()) {
    std::vector<int> shown(missing.begin(), missing.begin() + static_cast<long>(std::min<size_t>(missing.size(), 8)));
    rep.notes.push_back(fmt::format(
        "{} of the job's {} ranks have no trace here (missing: {}{}); the cross-rank "
        "figures are those of the ranks present",
        missing.size(), rep.world_size, fmt::join(shown, ", "), missing.size() > shown.size() ? ", ..." : ""));
  }
  for (const auto& g : rep.groups)
    if (g.unmatched > 0)
      rep.notes.push_back(
          fmt::format("group {}: {} collectives are not on every member (outside some member's selected "
                      "steps) and are not matched",
                      g.name, g.unmatched));
}

}  // namespace

Result<FleetReport> analyzeFleet(const std::vector<RankDigest>& digests, const FleetOptions& opt) {
  FleetReport rep;
  auto ranks = ranksWithSteps(digests, rep);
  if (!ranks.ok()) return ranks.error();
  Fleet f(opt, std::move(ranks.value()));
  rep.ranks = static_cast<int>(f.n);
  matchCollectives(f, rep);
  assignStages(f);
  ownTimes(f, rep);
  flagCells(f, rep);
  rankCauses(f);
  findSlowRanks(f, rep);
  findOutliers(f, rep);
  findSlowSteps(f, rep);
  reportStages(f, rep.stages);
  sumClasses(f.ranks, rep);
  jobConsensus(f.ranks, rep);
  coverageNotes(digests, rep);
  return rep;
}

}  // namespace gpudoctor
