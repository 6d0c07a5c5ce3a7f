#include "report/nccl_bench_report.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace gpudoctor {

std::string renderNcclBenchTable(const std::vector<NcclBenchRow>& rows, int nranks, bool in_place) {
  std::string o = fmt::format("# gpudoctor nccl bench: {} ranks\n", nranks);
  o += fmt::format("#{:>53}   {:^36}{}\n", "", "out-of-place", in_place ? "   in-place" : "");
  o += fmt::format("# {:>12} {:>12} {:>8} {:>6} {:>6} {:>9} {:>7} {:>7} {:>6}", "size", "count", "type", "redop",
                   "root", "time", "algbw", "busbw", "#wrong");
  if (in_place) o += fmt::format(" {:>9} {:>7} {:>7} {:>6}", "time", "algbw", "busbw", "#wrong");
  o += fmt::format("\n# {:>12} {:>12} {:>8} {:>6} {:>6} {:>9} {:>7} {:>7} {:>6}\n", "(B)", "(elements)", "", "", "",
                   "(us)", "(GB/s)", "(GB/s)", "");
  std::string coll;
  for (const auto& r : rows) {
    if (r.collective != coll) {
      coll = r.collective;
      o += "# " + coll + "\n";
    }
    o += fmt::format("  {:>12} {:>12} {:>8} {:>6} {:>6} {:>9.2f} {:>7.2f} {:>7.2f} {:>6}", r.bytes, r.count, r.dtype,
                     r.redop, r.root, r.time_us[0], r.algbw[0], r.busbw[0], r.wrong[0]);
    if (in_place) {
      if (r.time_us[1] > 0)
        o += fmt::format(" {:>9.2f} {:>7.2f} {:>7.2f} {:>6}", r.time_us[1], r.algbw[1], r.busbw[1], r.wrong[1]);
      else
        o += fmt::format(" {:>9} {:>7} {:>7} {:>6}", "n/a", "", "", "");
    }
    o += "\n";
  }
  int64_t wrong = wrongElements(rows);
  o += fmt::format("# Out of bounds values : {} {}\n# Avg bus bandwidth    : {:.3f}\n", wrong, wrong ? "FAILED" : "OK",
                   averageBusBandwidth(rows));
  return o;
}

std::string renderNcclBenchJson(const std::vector<NcclBenchRow>& rows, int nranks) {
  nlohmann::ordered_json j;
  j["tool"] = "gpudoctor nccl bench";
  j["schema_version"] = 1;  // bumped when a field changes meaning or goes away
  j["ranks"] = nranks;
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (const auto& r : rows)
    arr.push_back(
        {{"collective", r.collective},
         {"bytes", r.bytes},
         {"count", r.count},
         {"dtype", r.dtype},
         {"redop", r.redop},
         {"root", r.root},
         {"out_of_place",
          {{"time_us", r.time_us[0]}, {"algbw_gbps", r.algbw[0]}, {"busbw_gbps", r.busbw[0]}, {"wrong", r.wrong[0]}}},
         {"in_place",
          {{"time_us", r.time_us[1]}, {"algbw_gbps", r.algbw[1]}, {"busbw_gbps", r.busbw[1]}, {"wrong", r.wrong[1]}}}});
  j["results"] = arr;
  return j.dump(1) + "\n";
}

namespace {

std::string envText(const NcclTuneDecision& d) {
  std::string env;
  for (const auto& e : d.env_setting.envLines()) env += (env.empty() ? "" : " ") + e;
  return env;
}

}  // namespace

std::string renderNcclTuneJson(const NcclTuneDecision& d, const NcclTuneRun& run) {
  nlohmann::ordered_json j;
  j["tool"] = "gpudoctor nccl tune";
  j["schema_version"] = 1;  // bumped when a field changes meaning or goes away
  j["ranks"] = run.nranks;
  j["settings"] = run.settings;
  j["repeats"] = run.repeats;
  j["default_channels"] = run.default_channels;
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (const auto& c : d.choices)
    arr.push_back(
        {{"collective", c.key.collective},
         {"bytes", c.key.bytes},
         {"default_us", {{"median", c.default_median_us}, {"min", c.default_min_us}, {"max", c.default_max_us}}},
         {"best", c.best.key()},
         {"best_us", {{"median", c.best_median_us}, {"min", c.best_min_us}, {"max", c.best_max_us}}},
         {"gain", c.gain()},
         {"kept", c.kept},
         {"validated", c.validated},
         {"plugin_us", {{"median", c.plugin_median_us}, {"min", c.plugin_min_us}, {"max", c.plugin_max_us}}},
         {"plugin_slower", c.regressed}});
  j["choices"] = arr;
  j["validated"] = run.validated;
  j["dropped_by_validation"] = run.dropped;
  j["env"] = d.has_env_setting ? nlohmann::ordered_json(d.env_setting.envLines()) : nlohmann::ordered_json::array();
  if (!d.has_env_setting) j["why_no_env"] = d.why_no_env;
  j["tuner_config"] = run.tuner_config;
  return j.dump(1) + "\n";
}

std::string renderNcclTuneText(const NcclTuneDecision& d, const NcclTuneRun& run) {
  std::string o = fmt::format(
      "# gpudoctor nccl tune: {} ranks, {} settings x {} fresh processes, out-of-place time (us), "
      "median [min-max]; NCCL's own channel count {}\n",
      run.nranks, run.settings, run.repeats, run.default_channels ? std::to_string(run.default_channels) : "unknown");
  o += fmt::format("{:<13} {:>10} {:>24} {:>22} {:>24} {:>7}  {}\n", "collective", "bytes", "default", "best setting",
                   "best", "gain", run.validated ? "with the plugin (validation runs)" : "");
  auto range = [](double m, double lo, double hi) { return fmt::format("{:.2f} [{:.2f}-{:.2f}]", m, lo, hi); };
  for (const auto& c : d.choices) {
    std::string verdict = c.kept ? (c.validated ? "kept, validated" : "kept") : "";
    if (run.validated && c.plugin_median_us > 0)
      verdict = range(c.plugin_median_us, c.plugin_min_us, c.plugin_max_us) + " " +
                (c.validated   ? "kept, validated"
                 : c.regressed ? "SLOWER than default"
                               : "");
    o += fmt::format("{:<13} {:>10} {:>24} {:>22} {:>24} {:>6.1f}%  {}\n", c.key.collective, c.key.bytes,
                     range(c.default_median_us, c.default_min_us, c.default_max_us), c.best.key(),
                     range(c.best_median_us, c.best_min_us, c.best_max_us), 100 * c.gain(), verdict);
  }
  o += fmt::format(
      "\nKept: every run of the setting beat every run of the default, and the median by > {:g} %; the rest "
      "keep NCCL's default.\n",
      100 * kNcclTuneNoise);
  if (run.validated)
    o += fmt::format(
        "Validated: {} fresh processes with the plugin against {} without; {} kept choice(s) dropped "
        "because the plugin did not beat the default there.\n",
        run.repeats, run.repeats, run.dropped);
  else if (d.anyKept())
    o += "Not validated (--no-validate): the choices were not re-measured through the plugin.\n";
  if (d.has_env_setting)
    o += fmt::format(
        "\nEnvironment lines for the whole job (faster at {} size(s), never slower beyond the noise):\n"
        "  {}\n",
        d.env_wins, envText(d));
  else
    o += "\nEnvironment lines: none: " + d.why_no_env + ".\n";
  o += fmt::format(
      "\nTuner configuration written to {} (per collective and size). Apply it with:\n"
      "  NCCL_TUNER_PLUGIN=<dir>/libnccl-tuner-gpudoctor.so GPUDOCTOR_TUNER_CONFIG={}\n"
      "Per-size choices use at most NCCL's own channel count: the plugin can lower it, not raise it.\n",
      run.tuner_config, run.tuner_config);
  return o;
}

}  // namespace gpudoctor
