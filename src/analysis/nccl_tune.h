// The decision half of `gpudoctor nccl tune`: from the times measured per NCCL setting (fresh
// processes, repeats), which setting to keep per collective and size, which environment lines (if
// any) are safe for the whole job, and the tuner plugin's configuration. Pure: no processes, no I/O,
// so the rule that rejects noise is tested without a GPU.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gpudoctor {

// The noise level of every tune decision: a setting must be more than this fraction faster than the
// default at the median (and beyond both spreads) to count as a gain.
inline constexpr double kNcclTuneNoise = 0.05;

// One NCCL setting a sweep runs under: "default" leaves the variable unset.
struct NcclTuneSetting {
  std::string algo = "default", proto = "default", ctas = "default";
  // "ring/ll/ctas=8" style key, "default" for all-default.
  std::string key() const;
  // The environment assignments this setting needs (NCCL_ALGO=..., NCCL_MIN_CTAS=..., ...).
  std::vector<std::string> envLines() const;
  bool isDefault() const { return algo == "default" && proto == "default" && ctas == "default"; }
  auto operator<=>(const NcclTuneSetting&) const = default;
};

// One collective at one size.
struct NcclSizeKey {
  std::string collective;
  int64_t bytes = 0;
  auto operator<=>(const NcclSizeKey&) const = default;
};

// Per setting, per collective and size: the times of each fresh process (µs).
using NcclSweepTimes = std::map<NcclTuneSetting, std::map<NcclSizeKey, std::vector<double>>>;

// What the sweep concluded for one collective and size.
struct NcclTuneChoice {
  NcclSizeKey key;
  double default_median_us = 0, default_min_us = 0, default_max_us = 0;
  NcclTuneSetting best;  // the fastest median among the others (default when none measured)
  double best_median_us = 0, best_min_us = 0, best_max_us = 0;
  bool kept = false;  // best beats the default beyond the noise (see decideNcclTune)
  // After validateNcclTune: the plugin's own runs at this size (median/min/max µs; 0 = not measured)
  // and whether a kept choice held up there.
  double plugin_median_us = 0, plugin_min_us = 0, plugin_max_us = 0;
  bool validated = false;
  bool regressed = false;  // the plugin's runs were slower than the default's beyond the noise
  // Median gain of best over the default, as a fraction of the default (negative = slower).
  double gain() const { return default_median_us > 0 ? 1 - best_median_us / default_median_us : 0; }
};

// The whole conclusion.
struct NcclTuneDecision {
  std::vector<NcclTuneChoice> choices;  // by collective, then size
  // One setting safe as environment lines for the whole job: it wins somewhere beyond the noise and
  // loses nowhere beyond it. Empty when no such setting was measured.
  NcclTuneSetting env_setting;
  bool has_env_setting = false;
  int env_wins = 0;
  std::string why_no_env;  // when !has_env_setting
  // Whether any size keeps a non-default setting.
  bool anyKept() const;
};

// Keeps a non-default setting for a size only when every run of it beat every run of the default
// (the ranges do not overlap), its median is more than min_gain faster, and the median difference is
// above the default's own spread. Small-message latency differs between processes by more than a
// median of a few runs shows (docs/nccl_tune_2xh200.md).
// A per-size choice whose CTA count is above max_plugin_channels (the communicator's own channel
// count; 0 = unknown) is not offered to the plugin, which can lower NCCL's channel count but not
// raise it; such a setting can still qualify as environment lines.
NcclTuneDecision decideNcclTune(const NcclSweepTimes& times, double min_gain = kNcclTuneNoise,
                                int max_plugin_channels = 0);

// Closes the loop: fresh processes with the plugin and its configuration against fresh processes
// without, after the sweep. A kept choice stays only if the plugin beats the default at its size by
// the same rule; an untouched size where the plugin is slower beyond the noise is flagged. Returns
// the number of kept choices dropped.
int validateNcclTune(NcclTuneDecision& d, const std::map<NcclSizeKey, std::vector<double>>& default_times,
                     const std::map<NcclSizeKey, std::vector<double>>& plugin_times, double min_gain = kNcclTuneNoise);

// The three stages of `nccl tune`. Stage 1 sweeps NCCL_ALGO x NCCL_PROTO; stage 2 sweeps CTA counts
// (NCCL_MIN_CTAS = NCCL_MAX_CTAS) under NCCL's default and under every algorithm/protocol stage 1
// kept, so the sweep stays algos x protos + (1 + kept) x ctas settings rather than the full product;
// stage 3 re-measures the kept choices through the plugin (validateNcclTune).
// Stage 1's settings: every algorithm with every protocol, NCCL's default first when not among them.
std::vector<NcclTuneSetting> ncclTuneStage1(const std::vector<std::string>& algos,
                                            const std::vector<std::string>& protos);
// Stage 2's settings from stage 1's times: each CTA count other than "default" under the default and
// under each setting decideNcclTune kept (at kNcclTuneNoise, max_plugin_channels as there).
std::vector<NcclTuneSetting> ncclTuneStage2(const NcclSweepTimes& stage1, const std::vector<std::string>& ctas,
                                            int max_plugin_channels);
// A CTA count stage 2 can try: "default" or 1-64.
bool isNcclCtaCount(const std::string& c);
// A collective a tuner plugin can tune (allreduce, allgather, reducescatter, broadcast, reduce).
bool isNcclTunableCollective(const std::string& c);
// The non-empty items of a comma list ("ring,,tree" -> ring, tree).
std::vector<std::string> splitNcclTuneList(const std::string& s);

// The tuner plugin's configuration (collective,min_bytes,max_bytes,algorithm,protocol,channels,
// nranks,nnodes). A kept size stands for the sizes nearer to it than to the next measured size on
// either side (geometric midpoints), never up to the next measured size: NCCL's crossovers lie in
// between (ring/LL won at 2 MiB and lost by 33 % at 8 MiB on 2 x H200). Adjacent sizes that keep
// the same setting merge into one range.
std::string ncclTunerConfig(const NcclTuneDecision& d, int nranks, int nnodes);

}  // namespace gpudoctor
