#include "analysis/fleet.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

namespace gpudoctor {

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

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

Result<FleetReport> analyzeFleet(const std::vector<RankDigest>& digests, const FleetOptions& opt) {
  std::vector<const RankDigest*> sorted;
  for (const auto& d : digests) sorted.push_back(&d);
  std::sort(sorted.begin(), sorted.end(), [](const RankDigest* a, const RankDigest* b) {
    return a->rank != b->rank ? a->rank < b->rank : a->path < b->path;
  });
  for (size_t i = 1; i < sorted.size(); ++i)
    if (sorted[i]->rank == sorted[i - 1]->rank)
      return Error{fmt::format("rank {} appears twice ({} and {}): one trace or summary per rank", sorted[i]->rank,
                               sorted[i - 1]->path, sorted[i]->path)};
  FleetReport rep;
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
  const size_t n = ranks.size();
  rep.ranks = static_cast<int>(n);

  // Waiting in collectives, per rank and step, from each group's collectives matched by sequence number.
  std::vector<std::vector<double>> wait(n);
  std::vector<int64_t> nccl(n, 0), last_arrivals(n, 0);
  for (size_t i = 0; i < n; ++i) wait[i].assign(ranks[i]->steps.size(), 0);
  struct Member {
    size_t rank;  // index into ranks
    const DigestCollective* begin;
    const DigestCollective* end;
  };
  std::map<std::string, std::vector<Member>> members;
  std::map<std::string, const DigestGroup*> group_info;
  for (size_t i = 0; i < n; ++i) {
    const auto& cs = ranks[i]->collectives;
    for (size_t a = 0; a < cs.size();) {
      size_t b = a;
      while (b < cs.size() && cs[b].group == cs[a].group) ++b;
      const DigestGroup& g = ranks[i]->groups[cs[a].group];
      members[g.name].push_back({i, cs.data() + a, cs.data() + b});
      auto& info = group_info[g.name];
      if (!info || (info->size == 0 && g.size > 0)) info = &g;
      a = b;
    }
  }
  for (auto& [name, mem] : members) {
    FleetGroup fg;
    fg.name = name;
    fg.desc = std::string(group_info[name]->desc);
    fg.members = static_cast<int>(mem.size());
    fg.declared = group_info[name]->size;
    std::vector<const DigestCollective*> cur(mem.size());
    int64_t most = 0;
    for (size_t k = 0; k < mem.size(); ++k) {
      cur[k] = mem[k].begin;
      most = std::max<int64_t>(most, mem[k].end - mem[k].begin);
    }
    std::map<int64_t, std::map<size_t, double>> caused_in_step;  // step number -> cause rank -> wait
    std::map<size_t, double> caused;
    double total_wait = 0, total_nccl = 0;
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
        wait[mem[k].rank][cur[k]->step] += wk;
        nccl[mem[k].rank] += dur[k];
        w += wk;
        total_nccl += static_cast<double>(dur[k]);
      }
      total_wait += w;
      if (w > 0) {
        ++last_arrivals[mem[last].rank];
        caused[last] += w;
        caused_in_step[ranks[mem[last].rank]->steps[cur[last]->step].number][last] += w;
      }
    }
    fg.unmatched = most - fg.matched;
    fg.wait_fraction = total_nccl > 0 ? total_wait / total_nccl : 0;
    if (mem.size() < 2) {
      fg.note = "one member in the traces: nothing to match";
    } else if (fg.matched == 0) {
      fg.note = "no collective is seen on every member: nothing to match";
    } else if (caused.empty()) {
      fg.note = fmt::format("{} collectives matched; no member waited for another", fg.matched);
    } else {
      size_t top = caused.begin()->first;
      for (const auto& [k, w] : caused)
        if (w > caused[top]) top = k;
      int64_t steps = 0, led = 0;
      for (const auto& [step, by] : caused_in_step) {
        ++steps;
        size_t lead = by.begin()->first;
        for (const auto& [k, w] : by)
          if (w > by.at(lead)) lead = k;
        led += lead == top;
      }
      std::set<int64_t> step_numbers;
      for (const auto& m : mem)
        for (const auto& s : ranks[m.rank]->steps) step_numbers.insert(s.number);
      steps = std::max<int64_t>(steps, static_cast<int64_t>(step_numbers.size()));
      fg.top_cause = ranks[mem[top].rank]->rank;
      fg.cause_steps = steps ? static_cast<double>(led) / static_cast<double>(steps) : 0;
      fg.wait_share = caused[top] / total_wait;
      double member_steps = 0;
      for (const auto& m : mem)
        if (m.rank != mem[top].rank) member_steps += static_cast<double>(ranks[m.rank]->steps.size());
      fg.others_wait_ns = member_steps > 0 ? caused[top] / member_steps : 0;
      if (fg.cause_steps >= opt.straggler_steps_min && fg.wait_fraction >= opt.straggler_wait_min) {
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
    if (fg.declared > fg.members)
      fg.note += fmt::format("; {} of its {} ranks are in the traces", fg.members, fg.declared);
    rep.groups.push_back(std::move(fg));
  }

  // Pipeline stages from the pipeline groups.
  StageReport& st = rep.stages;
  std::vector<int> stage_of(n, -1);  // -1: no pipeline group
  std::map<int, std::vector<size_t>> stage_ranks;
  size_t staged = 0;
  int stage_count = 0;
  for (size_t i = 0; i < n; ++i)
    for (const auto& g : ranks[i]->groups) {
      if (!isPipelineGroup(g)) continue;
      if (g.position < 0) continue;
      stage_ranks[g.position].push_back(i);
      stage_of[i] = g.position;
      stage_count = std::max(stage_count, g.size);
      ++staged;
      break;
    }
  // Ranks are judged against their peers: the ranks of their pipeline stage (stages do different
  // work), all ranks when stages are unknown.
  auto peerOf = [&](size_t i) { return stage_ranks.size() >= 2 ? stage_of[i] : 0; };

  // Own time per rank and step; the steps by number.
  std::map<int64_t, std::vector<std::pair<size_t, size_t>>> by_step;  // number -> (rank, step index)
  std::map<std::pair<int, int64_t>, std::vector<std::pair<size_t, size_t>>> by_peer_step;  // (peers, number) -> cells
  double wall_sum = 0;
  for (size_t i = 0; i < n; ++i) {
    FleetRank row;
    row.rank = ranks[i]->rank;
    row.steps = static_cast<int64_t>(ranks[i]->steps.size());
    for (size_t j = 0; j < ranks[i]->steps.size(); ++j) {
      const auto& s = ranks[i]->steps[j];
      row.wall_ns += static_cast<double>(s.wall);
      row.wait_ns += wait[i][j];
      by_step[s.number].push_back({i, j});
      by_peer_step[{peerOf(i), s.number}].push_back({i, j});
    }
    wall_sum += row.wall_ns;
    rep.rank_steps += row.steps;
    row.own_ns = (row.wall_ns - row.wait_ns) / static_cast<double>(row.steps);
    row.wall_ns /= static_cast<double>(row.steps);
    row.wait_ns /= static_cast<double>(row.steps);
    row.nccl_ns = nccl[i];
    row.last_arrivals = last_arrivals[i];
    rep.rows.push_back(row);
  }
  rep.step_ns = wall_sum / static_cast<double>(rep.rank_steps);
  std::map<int64_t, double> step_median_wall;
  std::map<std::pair<int, int64_t>, double> step_median_own;  // (peers, number)
  {
    std::vector<double> medians;
    for (const auto& [num, cells] : by_step) {
      std::vector<double> w;
      for (auto [i, j] : cells) w.push_back(static_cast<double>(ranks[i]->steps[j].wall));
      step_median_wall[num] = median(w);
      medians.push_back(step_median_wall[num]);
    }
    for (const auto& [key, cells] : by_peer_step) {
      std::vector<double> o;
      for (auto [i, j] : cells) o.push_back(static_cast<double>(ranks[i]->steps[j].wall) - wait[i][j]);
      step_median_own[key] = median(o);
    }
    rep.median_step_ns = median(std::move(medians));
  }
  auto ownExcess = [&](size_t i, size_t j) {
    return static_cast<double>(ranks[i]->steps[j].wall) - wait[i][j] -
           step_median_own[{peerOf(i), ranks[i]->steps[j].number}];
  };

  // Cells whose own time stands out from their step's: robust to noise (three median absolute
  // deviations) and to tiny steps (a share of the median step).
  std::vector<std::vector<char>> flagged(n);
  for (size_t i = 0; i < n; ++i) flagged[i].assign(ranks[i]->steps.size(), 0);
  for (const auto& [key, cells] : by_peer_step) {
    if (cells.size() < 3) continue;  // two ranks cannot say which one is off
    std::vector<double> dev;
    for (auto [i, j] : cells) dev.push_back(std::abs(ownExcess(i, j)));
    double t = std::max(opt.outlier_min * rep.median_step_ns, 3 * median(std::move(dev)));
    for (auto [i, j] : cells)
      if (ownExcess(i, j) > t) flagged[i][j] = 1;
  }
  // Slow ranks: outliers in most of their steps.
  std::vector<std::array<double, kCauses>> rank_means(n);
  for (size_t i = 0; i < n; ++i) {
    for (const auto& s : ranks[i]->steps) {
      auto c = causesOf(s);
      for (size_t k = 0; k < kCauses; ++k) rank_means[i][k] += c[k] / static_cast<double>(ranks[i]->steps.size());
    }
  }
  std::map<int, std::vector<std::array<double, kCauses>>> peer_means;
  for (size_t i = 0; i < n; ++i) peer_means[peerOf(i)].push_back(rank_means[i]);
  std::map<int, std::array<double, kCauses>> peers;
  for (const auto& [p, v] : peer_means) peers[p] = medianCauses(v);
  std::vector<char> slow(n, 0);
  for (size_t i = 0; i < n; ++i) {
    int64_t f = 0;
    double excess = 0;
    for (size_t j = 0; j < ranks[i]->steps.size(); ++j) {
      f += flagged[i][j];
      excess += ownExcess(i, j);
    }
    auto steps = static_cast<int64_t>(ranks[i]->steps.size());
    if (f < 2 || static_cast<double>(f) < opt.slow_rank_steps_min * static_cast<double>(steps)) continue;
    slow[i] = 1;
    SlowRank sr;
    sr.rank = ranks[i]->rank;
    sr.steps_flagged = f;
    sr.steps = steps;
    sr.excess_ns = excess / static_cast<double>(steps);
    sr.cause = grownCause(rank_means[i], peers[peerOf(i)]);
    for (const auto& g : rep.groups)
      if (g.straggler == sr.rank) sr.groups.push_back(g.name);
    sr.step_ns = rep.step_ns;
    sr.what_if_step_ns = std::max(0.0, rep.step_ns - sr.excess_ns);
    rep.slow_ranks.push_back(std::move(sr));
  }
  std::sort(rep.slow_ranks.begin(), rep.slow_ranks.end(), [](const SlowRank& a, const SlowRank& b) {
    return a.excess_ns != b.excess_ns ? a.excess_ns > b.excess_ns : a.rank < b.rank;
  });
  // Outliers of the other ranks: one rank, one step; the cause against the rank's own other steps.
  for (size_t i = 0; i < n; ++i) {
    if (slow[i]) continue;
    for (size_t j = 0; j < ranks[i]->steps.size(); ++j) {
      if (!flagged[i][j]) continue;
      const auto& s = ranks[i]->steps[j];
      std::vector<std::array<double, kCauses>> others;
      for (size_t k = 0; k < ranks[i]->steps.size(); ++k)
        if (!flagged[i][k]) others.push_back(causesOf(ranks[i]->steps[k]));
      if (others.empty()) others.push_back(peers[peerOf(i)]);
      StepOutlier o;
      o.rank = ranks[i]->rank;
      o.step = s.number;
      o.excess_ns = ownExcess(i, j);
      o.median_ns = static_cast<double>(s.wall) - wait[i][j] - o.excess_ns;
      o.cause = grownCause(causesOf(s), medianCauses(others));
      rep.outliers.push_back(std::move(o));
    }
  }
  std::sort(rep.outliers.begin(), rep.outliers.end(), [](const StepOutlier& a, const StepOutlier& b) {
    if (a.excess_ns != b.excess_ns) return a.excess_ns > b.excess_ns;
    return a.rank != b.rank ? a.rank < b.rank : a.step < b.step;
  });
  // Steps slow on every rank that no single rank explains.
  for (const auto& [num, w] : step_median_wall) {
    double excess = w - rep.median_step_ns;
    if (excess < opt.slow_step_min * rep.median_step_ns) continue;
    double explained = 0;
    for (const auto& o : rep.outliers)
      if (o.step == num) explained = std::max(explained, o.excess_ns);
    for (const auto& sr : rep.slow_ranks) explained = std::max(explained, sr.excess_ns);
    if (explained >= excess / 2) continue;
    rep.slow_steps.push_back({num, w, excess});
  }

  if (stage_ranks.size() < 2) {
    st.basis = stage_ranks.empty() ? "no pipeline-parallel group in the traces' process groups (pg_config: a "
                                     "description containing \"pipe\")"
                                   : "one pipeline stage in the traces";
  } else {
    st.known = true;
    st.basis = fmt::format(
        "{} stages from the pipeline-parallel groups of pg_config (a rank's stage: its place in "
        "its group); GPU work per step = compute + exposed copies, median over the stage's ranks",
        stage_count);
    if (staged < n) st.basis += fmt::format("; {} of {} ranks have no pipeline group", n - staged, n);
    std::vector<double> values;
    for (const auto& [stage, idx] : stage_ranks) {
      FleetStage fs;
      fs.stage = stage;
      std::vector<double> v;
      for (size_t i : idx) {
        fs.ranks.push_back(ranks[i]->rank);
        v.push_back(rank_means[i][0] + rank_means[i][1]);
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
    st.flagged = st.imbalance >= opt.stage_imbalance_min;
    st.note = st.flagged
                  ? fmt::format(
                        "stage {} (ranks {}) does {} of GPU work per step, {:.0f}% more than the median stage "
                        "({}); the pipeline runs at its slowest stage's pace: move layers off stage {} (up to {} "
                        "per step)",
                        st.slowest, rankList(st.stages[worst].ranks), ms(st.stages[worst].gpu_ns), 100 * st.imbalance,
                        ms(med), st.slowest, ms(st.excess_ns))
                  : fmt::format(
                        "stages balanced: the slowest, stage {}, does {:.1f}% more GPU work per step than the "
                        "median stage",
                        st.slowest, 100 * st.imbalance);
  }

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
  // The job profile: each field's most common value; ranks that differ are named.
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
  return rep;
}

}  // namespace gpudoctor
