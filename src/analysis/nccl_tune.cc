#include "analysis/nccl_tune.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace gpudoctor {

std::string NcclTuneSetting::key() const {
  if (isDefault()) return "default";
  std::string k = algo + "/" + proto;
  if (ctas != "default") k += "/ctas=" + ctas;
  return k;
}

std::vector<std::string> NcclTuneSetting::envLines() const {
  std::vector<std::string> v;
  if (algo != "default") v.push_back("NCCL_ALGO=" + algo);
  if (proto != "default") v.push_back("NCCL_PROTO=" + proto);
  if (ctas != "default") {
    v.push_back("NCCL_MIN_CTAS=" + ctas);
    v.push_back("NCCL_MAX_CTAS=" + ctas);
  }
  return v;
}

namespace {

struct Stats {
  double median = 0, min = 0, max = 0;
};
Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v.empty() ? 0 : v[v.size() / 2], v.empty() ? 0 : v.front(), v.empty() ? 0 : v.back()};
}

// Beyond the noise: every run of a beat every run of b, by more than min_gain at the median and more
// than b's own spread.
bool beats(const Stats& a, const Stats& b, double min_gain) {
  return a.max < b.min && a.median < (1 - min_gain) * b.median && b.median - a.median > b.max - b.min;
}

}  // namespace

NcclTuneDecision decideNcclTune(const NcclSweepTimes& times, double min_gain, int max_plugin_channels) {
  NcclTuneDecision d;
  auto def_it = times.find(NcclTuneSetting{});
  if (def_it == times.end()) {
    d.why_no_env = "NCCL's default was not measured";
    return d;
  }
  for (const auto& [key, dv] : def_it->second) {
    if (dv.empty()) continue;
    Stats ds = stats(dv);
    NcclTuneChoice c;
    c.key = key;
    c.default_median_us = ds.median;
    c.default_min_us = ds.min;
    c.default_max_us = ds.max;
    Stats bs = ds;
    for (const auto& [setting, m] : times) {
      // The plugin sets algorithm and protocol together or neither (NCCL's rule for tuners).
      if (setting.isDefault() || (setting.algo == "default") != (setting.proto == "default")) continue;
      if (max_plugin_channels > 0 && setting.ctas != "default" && std::stoi(setting.ctas) > max_plugin_channels)
        continue;
      auto it = m.find(key);
      if (it == m.end() || it->second.empty()) continue;
      Stats s = stats(it->second);
      if (s.median < bs.median) {
        bs = s;
        c.best = setting;
      }
    }
    c.best_median_us = bs.median;
    c.best_min_us = bs.min;
    c.best_max_us = bs.max;
    c.kept = !c.best.isDefault() && beats(bs, ds, min_gain);
    d.choices.push_back(c);
  }
  // Environment lines apply to every collective and size of the job: a setting qualifies only if it
  // wins beyond the noise somewhere and is never slower beyond it anywhere it was measured.
  double best_gain_sum = 0;
  for (const auto& [setting, m] : times) {
    if (setting.isDefault()) continue;
    int wins = 0;
    bool loses = false;
    double gain_sum = 0;
    for (const auto& [key, dv] : def_it->second) {
      auto it = m.find(key);
      if (it == m.end() || it->second.empty() || dv.empty()) continue;
      Stats s = stats(it->second), ds = stats(dv);
      if (beats(s, ds, min_gain)) {
        ++wins;
        gain_sum += 1 - s.median / ds.median;
      }
      // Slower beyond the noise, or merely slower by more than min_gain: not safe for the whole job.
      if (beats(ds, s, min_gain) || s.median > (1 + min_gain) * ds.median) loses = true;
    }
    if (wins > 0 && !loses && gain_sum > best_gain_sum) {
      best_gain_sum = gain_sum;
      d.env_setting = setting;
      d.env_wins = wins;
      d.has_env_setting = true;
    }
  }
  if (!d.has_env_setting)
    d.why_no_env =
        "no setting measured is at least as fast as NCCL's default at every size and faster beyond the "
        "noise at one; apply the per-size choices with the tuner plugin instead";
  return d;
}

int validateNcclTune(NcclTuneDecision& d, const std::map<NcclSizeKey, std::vector<double>>& default_times,
                     const std::map<NcclSizeKey, std::vector<double>>& plugin_times, double min_gain) {
  int dropped = 0;
  for (auto& c : d.choices) {
    auto di = default_times.find(c.key);
    auto pi = plugin_times.find(c.key);
    if (di == default_times.end() || pi == plugin_times.end() || di->second.empty() || pi->second.empty()) {
      if (c.kept) {
        c.kept = false;  // not confirmed: never shipped
        ++dropped;
      }
      continue;
    }
    Stats ds = stats(di->second), ps = stats(pi->second);
    c.plugin_median_us = ps.median;
    c.plugin_min_us = ps.min;
    c.plugin_max_us = ps.max;
    c.regressed = beats(ds, ps, min_gain);
    if (c.kept) {
      c.validated = beats(ps, ds, min_gain);
      if (!c.validated) {
        c.kept = false;
        ++dropped;
      }
    }
  }
  return dropped;
}

bool NcclTuneDecision::anyKept() const {
  return std::any_of(choices.begin(), choices.end(), [](const NcclTuneChoice& c) { return c.kept; });
}

std::vector<NcclTuneSetting> ncclTuneStage1(const std::vector<std::string>& algos,
                                            const std::vector<std::string>& protos) {
  std::vector<NcclTuneSetting> stage1;
  bool has_default = false;
  for (const auto& al : algos)
    for (const auto& pr : protos) {
      stage1.push_back({al, pr, "default"});
      has_default |= stage1.back().isDefault();
    }
  if (!has_default) stage1.insert(stage1.begin(), NcclTuneSetting{});
  return stage1;
}

std::vector<NcclTuneSetting> ncclTuneStage2(const NcclSweepTimes& stage1, const std::vector<std::string>& ctas,
                                            int max_plugin_channels) {
  std::vector<NcclTuneSetting> stage2;
  if (ctas.empty()) return stage2;
  std::vector<NcclTuneSetting> bases = {NcclTuneSetting{}};
  for (const auto& c : decideNcclTune(stage1, kNcclTuneNoise, max_plugin_channels).choices)
    if (c.kept && std::find(bases.begin(), bases.end(), c.best) == bases.end()) bases.push_back(c.best);
  for (const auto& b : bases)
    for (const auto& c : ctas)
      if (c != "default") stage2.push_back({b.algo, b.proto, c});
  return stage2;
}

bool isNcclCtaCount(const std::string& c) {
  return c == "default" || (c.find_first_not_of("0123456789") == std::string::npos && std::atoi(c.c_str()) >= 1 &&
                            std::atoi(c.c_str()) <= 64);
}

bool isNcclTunableCollective(const std::string& c) {
  return c == "allreduce" || c == "allgather" || c == "reducescatter" || c == "broadcast" || c == "reduce";
}

std::vector<std::string> splitNcclTuneList(const std::string& s) {
  std::vector<std::string> v;
  for (size_t p = 0; p <= s.size();) {
    size_t q = s.find(',', p);
    if (q == std::string::npos) q = s.size();
    if (q > p) v.push_back(s.substr(p, q - p));
    p = q + 1;
  }
  return v;
}

std::string ncclTunerConfig(const NcclTuneDecision& d, int nranks, int nnodes) {
  std::string cfg = "# gpudoctor nccl tune: collective,min_bytes,max_bytes,algorithm,protocol,channels,nranks,nnodes\n";
  const auto& cs = d.choices;
  auto mid = [](int64_t a, int64_t b) { return static_cast<int64_t>(std::ceil(std::sqrt(double(a) * double(b)))); };
  for (size_t i = 0; i < cs.size(); ++i) {
    if (!cs[i].kept) continue;
    bool prev_same = i > 0 && cs[i - 1].key.collective == cs[i].key.collective;
    int64_t lo = prev_same ? mid(cs[i - 1].key.bytes, cs[i].key.bytes) : 0;
    // Extend over following sizes that keep the same setting.
    size_t j = i;
    while (j + 1 < cs.size() && cs[j + 1].key.collective == cs[i].key.collective && cs[j + 1].kept &&
           cs[j + 1].best == cs[i].best)
      ++j;
    bool next_same = j + 1 < cs.size() && cs[j + 1].key.collective == cs[i].key.collective;
    int64_t hi = next_same ? mid(cs[j].key.bytes, cs[j + 1].key.bytes) - 1 : (int64_t{1} << 62);
    const NcclTuneSetting& s = cs[i].best;
    std::string channels = s.ctas == "default" ? "0" : s.ctas;
    cfg += fmt::format("{},{},{},{},{},{},{},{}\n", cs[i].key.collective, lo, hi, s.algo, s.proto, channels, nranks,
                       nnodes);
    i = j;
  }
  return cfg;
}

}  // namespace gpudoctor
