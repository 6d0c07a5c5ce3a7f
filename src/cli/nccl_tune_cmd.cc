// `gpudoctor nccl tune`: sweeps NCCL settings in fresh `nccl bench` processes (launch/), decides per
// collective and size what to keep (analysis/nccl_tune.h), validates it through the tuner plugin, and
// writes the plugin's configuration.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/nccl_tune.h"
#include "cli/commands.h"
#include "cli/json_output.h"
#include "cli/nccl_sweep.h"
#include "common/atomic_file.h"
#include "launch/processes.h"
#include "report/nccl_bench_report.h"

namespace gpudoctor::cli {

namespace {

struct TuneArgs : SweepArgs {
  TuneArgs() {
    max_bytes = "256M";
    factor = 4;
  }
  std::string out = "gpudoctor-tuner.csv";
  std::string algos = "default,ring,tree", protos = "default,ll,ll128,simple", ctas = "4,8,16,32";
  int repeats = 5;
  bool no_validate = false;
  std::string json;
  std::string plugin;  // libnccl-tuner-gpudoctor.so; default: beside the binary
};

using SizeTimes = std::map<NcclSizeKey, std::vector<double>>;

// One fresh `nccl bench` process with the given environment assignments (NCCL caches CTA counts per
// process and reads ALGO/PROTO at communicator init): its out-of-place times per collective and
// size go into `into`; returns the rank count. `label` names the setting in errors.
Result<int> benchOnce(const TuneArgs& a, const std::string& label, const std::vector<std::string>& env,
                      const std::string& collectives, SizeTimes& into) {
  auto run = runCaptured({"NCCL_ALGO", "NCCL_PROTO", "NCCL_MIN_CTAS", "NCCL_MAX_CTAS", "NCCL_TUNER_PLUGIN"}, env,
                         fmt::format("/proc/{}/exe nccl bench --json - --out-of-place-only {} -b {} -e {} -f {} "
                                     "--collectives {} -d {} -n {} -w {}",
                                     getpid(), a.gpus > 0 ? "-g " + std::to_string(a.gpus) : "", a.min_bytes,
                                     a.max_bytes, a.factor, collectives, a.dtype, a.iters, a.warmup));
  if (!run.ok()) return Error{"cannot start nccl bench"};
  const std::string& outp = run.value().output;
  size_t brace = outp.find('{');
  if (run.value().status != 0 || brace == std::string::npos) {
    // One line: the worker's first error, without its own prefix.
    std::string why = outp.substr(0, outp.find('\n'));
    if (why.rfind("gpudoctor: error: ", 0) == 0) why = why.substr(18);
    return Error{fmt::format("nccl bench under {} failed: {}", label, why.empty() ? "no output" : why.substr(0, 300))};
  }
  auto j = nlohmann::json::parse(outp.substr(brace), nullptr, false);
  if (j.is_discarded() || !j.contains("results")) return Error{"nccl bench under " + label + " printed no JSON"};
  for (const auto& row : j["results"])
    into[{row["collective"].get<std::string>(), row["bytes"].get<int64_t>()}].push_back(
        row["out_of_place"]["time_us"].get<double>());
  return j.value("ranks", 0);
}

// The communicator's own channel count under NCCL's defaults, from one default run with
// NCCL_DEBUG=INFO ("24 coll channels, ..."); 0 when NCCL did not say.
int defaultChannels(const TuneArgs& a) {
  SizeTimes times;  // not part of the sweep: logging at init must not touch its figures
  std::string base = (std::filesystem::temp_directory_path() / fmt::format("gpudoctor_tune_{}", getpid())).string();
  auto n = benchOnce(a, "default", {"NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=INIT", "NCCL_DEBUG_FILE=" + base + ".%p.log"},
                     a.collectives, times);
  int channels = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::temp_directory_path(), ec)) {
    if (e.path().string().rfind(base + ".", 0) != 0) continue;
    std::ifstream in(e.path());
    for (std::string line; std::getline(in, line);)
      if (size_t k = line.find(" coll channels"); k != std::string::npos) {
        int c = std::atoi(line.c_str() + line.find_last_not_of("0123456789", k - 1) + 1);
        if (c > 0) channels = channels ? std::min(channels, c) : c;
      }
    std::filesystem::remove(e.path(), ec);
  }
  return n.ok() ? channels : 0;
}

int runTuneWith(const TuneArgs& a);

// The three stages (analysis/nccl_tune.h): each setting runs in `repeats` fresh processes;
// decideNcclTune keeps only gains beyond the noise; stage 3 re-measures the kept choices through the
// plugin itself and drops those it does not confirm.
int runTune(const TuneArgs& a) {
  for (const auto& c : splitNcclTuneList(a.collectives))
    if (!isNcclTunableCollective(c))
      return fail("nccl tune: \"" + c +
                      "\" cannot be tuned by a tuner plugin (allreduce, allgather, reducescatter, broadcast, reduce)",
                  kUsage);
  TuneArgs args = a;
  if (args.plugin.empty()) {
    std::error_code ec;
    auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    args.plugin = (self.parent_path() / "libnccl-tuner-gpudoctor.so").string();
  }
  if (!args.no_validate && !std::filesystem::exists(args.plugin))
    return fail("nccl tune: no tuner plugin at " + args.plugin +
                " to validate with (give --plugin PATH or --no-validate)");
  args.plugin = std::filesystem::absolute(args.plugin).string();
  return runTuneWith(args);
}

int runTuneWith(const TuneArgs& a) {
  auto ctas = splitNcclTuneList(a.ctas);
  for (const auto& c : ctas)
    if (!isNcclCtaCount(c)) return fail("--ctas: \"" + c + "\" is not a CTA count (1-64)", kUsage);
  std::vector<NcclTuneSetting> stage1 = ncclTuneStage1(splitNcclTuneList(a.algos), splitNcclTuneList(a.protos));
  NcclSweepTimes times;
  NcclTuneRun run;
  run.repeats = a.repeats;
  run.tuner_config = a.out;
  size_t done = 0;
  // NCCL refuses some pairs (NCCL_ALGO=tree for allgather: "invalid usage"). When a setting's first
  // process fails, each collective is tried alone; the ones NCCL refuses are not measured under that
  // setting (they keep the default), and only if none runs is it an error.
  auto measure = [&](const std::vector<NcclTuneSetting>& settings, size_t total) -> Status {
    for (const auto& s : settings) {
      std::string colls = a.collectives;
      for (int r = 0; r < a.repeats; ++r) {
        auto n = benchOnce(a, s.key(), s.envLines(), colls, times[s]);
        if (!n.ok() && r == 0 && colls.find(',') != std::string::npos) {
          std::string ok;
          for (const auto& c : splitNcclTuneList(colls))
            if (auto one = benchOnce(a, s.key(), s.envLines(), c, times[s]); one.ok()) {
              ok += (ok.empty() ? "" : ",") + c;
              n = one;
            }
          if (!ok.empty()) {
            std::fprintf(stderr, "\nnccl tune: NCCL refuses %s for some collectives; measured only %s under it\n",
                         s.key().c_str(), ok.c_str());
            colls = ok;
          }
        }
        if (!n.ok()) return n.error();
        run.nranks = n.value();
        std::fprintf(stderr, "\rnccl tune: %zu/%zu runs (%s)          ", ++done, total, s.key().c_str());
      }
    }
    return {};
  };
  auto stop = [](const std::string& message) {
    std::fprintf(stderr, "\n");
    return fail(message);
  };
  size_t planned = stage1.size() * static_cast<size_t>(a.repeats) + 1;
  run.default_channels = defaultChannels(a);
  ++done;
  if (Status st = measure(stage1, planned); !st.ok()) return stop(st.message());
  std::vector<NcclTuneSetting> stage2 = ncclTuneStage2(times, ctas, run.default_channels);
  planned += stage2.size() * static_cast<size_t>(a.repeats);
  if (Status st = measure(stage2, planned); !st.ok()) return stop(st.message());
  NcclTuneDecision d = decideNcclTune(times, kNcclTuneNoise, run.default_channels);
  // Stage 3: the candidate configuration through the plugin itself, in fresh processes interleaved
  // with the default's, because the sweep's own default can differ from a later process's (on
  // 2 x H200 allreduce 512 B took 16.8 us in every sweep process and 6.5 us in every later one).
  if (d.anyKept() && !a.no_validate) {
    std::string candidate = a.out + ".candidate";
    if (Status st = writeFileAtomic(candidate, ncclTunerConfig(d, run.nranks, 1)); !st.ok()) return stop(st.message());
    SizeTimes def, plug;
    size_t total = planned + 2 * static_cast<size_t>(a.repeats);
    for (int r = 0; r < a.repeats; ++r) {
      for (bool with : {false, true}) {
        std::vector<std::string> env;
        if (with) env = {"NCCL_TUNER_PLUGIN=" + a.plugin, "GPUDOCTOR_TUNER_CONFIG=" + candidate};
        auto n = benchOnce(a, with ? "the tuner plugin" : "default", env, a.collectives, with ? plug : def);
        if (!n.ok()) {
          std::remove(candidate.c_str());
          return stop(n.error().message);
        }
        std::fprintf(stderr, "\rnccl tune: %zu/%zu runs (validating %s)          ", ++done, total,
                     with ? "with the plugin" : "default");
      }
    }
    std::remove(candidate.c_str());
    run.dropped = validateNcclTune(d, def, plug);
    run.validated = true;
  }
  std::fprintf(stderr, "\n");
  if (Status st = writeFileAtomic(a.out, ncclTunerConfig(d, run.nranks, 1)); !st.ok()) return fail(st.message());
  run.settings = times.size();
  std::string json = a.json.empty() ? "" : renderNcclTuneJson(d, run);
  std::string text = jsonOnly(a.json) ? "" : renderNcclTuneText(d, run);
  if (std::string err = writeOutputs(a.json, text, json); !err.empty()) return fail(err, kBadInput);
  return 0;
}

}  // namespace

std::function<int()> addNcclTune(CLI::App* nccl) {
  auto a = std::make_shared<TuneArgs>();
  auto* cmd = nccl->add_subcommand(
      "tune",
      "Sweep NCCL_ALGO x NCCL_PROTO, then CTA counts (NCCL_MIN_CTAS = NCCL_MAX_CTAS), per collective and size, "
      "each setting in several fresh nccl bench processes; keep only gains beyond the noise; print environment "
      "lines safe for the whole job (if any) and write a per-size configuration for gpudoctor's NCCL tuner plugin "
      "(libnccl-tuner-gpudoctor.so).");
  addSweepOptions(cmd, *a, "allreduce, allgather, reducescatter, broadcast, reduce (comma list)");
  cmd->add_option("--algos", a->algos, "Algorithms to try (NCCL_ALGO values; default = NCCL's choice)")
      ->capture_default_str();
  cmd->add_option("--protos", a->protos, "Protocols to try (NCCL_PROTO values)")->capture_default_str();
  cmd->add_option("--ctas", a->ctas, "CTA counts to try in stage 2 (\"\" skips it)")->capture_default_str();
  cmd->add_option("--repeats", a->repeats, "Fresh runs per setting (medians)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  addJsonOption(cmd, &a->json, "the sweep and its choices");
  cmd->add_option("--plugin", a->plugin,
                  "libnccl-tuner-gpudoctor.so for the validation runs (default: beside gpudoctor)");
  cmd->add_flag("--no-validate", a->no_validate, "Skip re-measuring the kept choices through the plugin");
  cmd->add_option("--out", a->out, "Tuner configuration to write")->capture_default_str();
  return [a, cmd] { return cmd->parsed() ? runTune(*a) : -1; };
}

}  // namespace gpudoctor::cli
