// `gpudoctor nccl env`: check NCCL settings against the installed NCCL and this host.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/json_output.h"
#include "diagnosis/nccl_env_check.h"
#include "diagnosis/nccl_log_check.h"
#include "probes/host_net.h"
#include "probes/nccl_library.h"
#include "report/nccl_env_report.h"
#include "report/nccl_log_report.h"
#include "sources/nccl_env/settings_reader.h"
#include "sources/nccl_log/nccl_log_reader.h"

namespace gpudoctor::cli {

namespace {

struct EnvArgs {
  std::vector<std::string> from;
  std::string nccl_version;
  std::string sysfs_root;
  std::vector<std::string> keep;
  bool multi_node = false, no_host = false, this_host = false, strict = false;
  std::string json;
};

int runEnv(const EnvArgs& a) {
  std::vector<NcclSetting> settings;
  std::string source = "the environment";
  if (a.from.empty()) {
    settings = ncclSettingsFromEnvironment();
  } else {
    source = "";
    for (const auto& f : a.from) {
      auto r = readNcclSettingsFile(f);
      if (!r.ok()) return fail(r.error().message, kBadInput);
      for (auto& s : r.value()) {
        // Later files override earlier ones, as later exports do.
        auto it = std::find_if(settings.begin(), settings.end(), [&](const auto& x) { return x.name == s.name; });
        if (it != settings.end())
          *it = s;
        else
          settings.push_back(s);
      }
      source += (source.empty() ? "" : ", ") + f;
    }
  }
  EnvCheckOptions opt;
  InstalledNccl lib;
  std::string version_note;
  if (!a.nccl_version.empty()) {
    auto v = parseNcclVersion(a.nccl_version);
    if (!v.ok()) return fail("--nccl-version: " + v.error().message, kUsage);
    opt.version = v.value();
    version_note = "NCCL " + ncclVersionString(opt.version) + " (--nccl-version)";
  } else {
    lib = probeInstalledNccl();
    if (lib.found) {
      opt.version = lib.version;
      version_note = "NCCL " + ncclVersionString(lib.version) + " (" + lib.library + ")";
    } else {
      version_note = "NCCL version unknown: " + lib.note + "; pass --nccl-version to check releases";
    }
  }
  // Settings read from files are for the job's machines, not necessarily this one (a login node
  // judging a pod's YAML): the host checks run on them only with --this-host.
  if (a.no_host && a.this_host) return fail("--no-host and --this-host contradict each other", kUsage);
  const bool check_host = a.from.empty() ? !a.no_host : a.this_host;
  HostNet host;
  if (check_host) {
    host = probeHostNet(a.sysfs_root);
    probeSettingFiles(host, settings);
    opt.host = &host;
  }
  opt.multi_node = a.multi_node;
  opt.keep.insert(a.keep.begin(), a.keep.end());
  auto findings = checkNcclEnv(settings, NcclVarTable::builtin(), opt);
  NcclEnvContext ctx;
  ctx.source = source;
  ctx.version_note = version_note;
  ctx.version = opt.version ? ncclVersionString(opt.version) : "";
  ctx.library = lib.library;
  ctx.settings = settings.size();
  ctx.host_checked = check_host;
  ctx.host_note = check_host  ? ""
                  : a.no_host ? "host checks skipped (--no-host)"
                              : "host checks skipped: the settings come from a file, for the job's machines "
                                "(--this-host checks them against this one)";
  ctx.multi_node = a.multi_node;
  std::string json = a.json.empty() ? "" : renderNcclEnvJson(findings, ctx);
  std::string text = jsonOnly(a.json) ? "" : renderNcclEnvText(findings, ctx);
  if (std::string err = writeOutputs(a.json, text, json); !err.empty()) return fail(err, kBadInput);
  std::map<EnvVerdict, int> count;
  for (const auto& f : findings) ++count[f.verdict];
  if (a.strict && (count[EnvVerdict::kIgnored] || count[EnvVerdict::kWrong])) return kGateFailed;
  return kOk;
}

}  // namespace

struct LogArgs {
  std::vector<std::string> files;
  std::string json;
};

int runLog(const LogArgs& a) {
  auto f = readNcclLogs(a.files);
  if (!f.ok()) return fail(f.error().message);
  auto findings = judgeNcclLog(f.value());
  std::string json = a.json.empty() ? "" : renderNcclLogJson(f.value(), findings);
  std::string text = jsonOnly(a.json) ? "" : renderNcclLogText(f.value(), findings);
  if (std::string err = writeOutputs(a.json, text, json); !err.empty()) return fail(err, kBadInput);
  return 0;
}

std::function<int()> addNccl(CLI::App& app) {
  auto* nccl = app.add_subcommand("nccl",
                                  "NCCL: check settings (env), read NCCL_DEBUG=INFO logs (log); in CUDA builds, "
                                  "benchmark collectives (bench) and tune them for the tuner plugin (tune)");
  nccl->require_subcommand(1);
  auto args = std::make_shared<EnvArgs>();
  auto* env = nccl->add_subcommand(
      "env",
      "Check NCCL_* settings (from this environment, or files of export lines, Kubernetes env lists, Slurm "
      "--export lists or NCCL INFO logs) against the NCCL variable table, the installed NCCL and this host. "
      "Each setting: fine / ignored by NCCL / wrong / slow / intentional, with the reason and the fix.");
  env->add_option("--from", args->from, "Read settings from FILE ('-': stdin) instead of the environment; repeatable")
      ->type_name("FILE");
  env->add_option("--nccl-version", args->nccl_version,
                  "Judge against this NCCL release (default: the installed libnccl)");
  env->add_option("--keep", args->keep, "A variable that must stay as set (site policy): reported as intentional")
      ->type_name("NAME");
  env->add_flag("--multi-node", args->multi_node, "The job spans several nodes (network advice applies)");
  env->add_flag("--no-host", args->no_host,
                "Skip checks against this host's interfaces and HCAs (settings for another machine)");
  env->add_flag("--this-host", args->this_host,
                "With --from: the file's settings are for this machine; check them against its interfaces and HCAs "
                "(default: not, since a pod's or job's file usually describes other machines)");
  env->add_option("--sysfs-root", args->sysfs_root, "Read /sys from this folder instead (testing)")->group("");
  addJsonOption(env, &args->json, "the verdicts");
  env->add_flag("--strict", args->strict, "Exit 1 when a setting is ignored by NCCL or wrong (a CI gate)");
  auto largs = std::make_shared<LogArgs>();
  auto* log = nccl->add_subcommand(
      "log",
      "Read NCCL_DEBUG=INFO logs (one per rank, or interleaved): version, ranks and nodes, network, transports "
      "per channel (P2P, SHM, NET/IB with or without GPUDirect RDMA, sockets), channel counts, rings and trees, "
      "plugins, NVLS and settings; warns about what matters (multi-node on sockets, GDR off, no P2P, few channels).");
  log->add_option("files", largs->files, "NCCL log files")->required();
  addJsonOption(log, &largs->json, "what the logs say");
#ifdef GPUDOCTOR_HAVE_CUDA
  auto bench_only = addNcclBench(nccl, [] { return commandLine(); });
  auto tune = addNcclTune(nccl);
  auto bench = [bench_only, tune] {
    if (int rc = tune(); rc >= 0) return rc;
    return bench_only();
  };
#else
  auto* bench_cmd = nccl->add_subcommand("bench", "Collective benchmark (needs a build with the CUDA toolkit)");
  bench_cmd->allow_extras();
  auto bench = [bench_cmd] {
    if (!bench_cmd->parsed()) return -1;
    return fail("nccl bench: this gpudoctor was built without CUDA: rebuild where the CUDA toolkit is installed",
                kNoDevice);
  };
#endif
  return [args, env, largs, log, bench] {
    if (log->parsed()) return runLog(*largs);
    if (int rc = bench(); rc >= 0) return rc;
    return env->parsed() ? runEnv(*args) : kUsage;
  };
}

}  // namespace gpudoctor::cli
