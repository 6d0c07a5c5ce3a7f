// `gpudoctor monitor`: live GPU and host metrics judged against the guide's thresholds, on the
// terminal, as JSON or CSV, into a crash-safe recording, and as a Prometheus endpoint (the loop:
// monitor_run.cc); `monitor report` summarizes a recording.
#include <memory>

#include "cli/commands.h"
#include "cli/json_output.h"
#include "cli/monitor_args.h"
#include "cli/usage.h"
#include "common/atomic_file.h"
#include "diagnosis/monitor_summary.h"
#include "report/monitor_report.h"
#include "sources/monitor_record/monitor_record.h"

namespace gpudoctor::cli {
namespace {

int runReport(const MonitorArgs& a, const Thresholds& t) {
  auto rec = readMonitorRecording(a.report_file);
  if (!rec.ok()) return fail(rec.error().message);
  MonitorSummary m = summarizeMonitor(rec.value().samples, t);
  m.torn_tail = rec.value().torn_tail;
  std::string json = a.report_json.empty() ? "" : renderMonitorSummaryJson(m);
  std::string text = jsonOnly(a.report_json) ? "" : renderMonitorSummary(m);
  if (std::string err = writeOutputs(a.report_json, text, json); !err.empty()) return fail(err, kBadInput);
  return 0;
}

}  // namespace

std::function<int()> addMonitor(CLI::App& app) {
  auto a = std::make_shared<MonitorArgs>();
  auto* cmd = app.add_subcommand(
      "monitor",
      "Live GPU (NVML) and host (/proc, /sys) metrics judged against the guide's health thresholds (GPU util > 90 %, "
      "GPU memory < 95 %, IO wait < 10 %, CPU < 80 %), each red flag with its likely reason. Records to a crash-safe "
      "file, serves Prometheus metrics. `gpudoctor monitor report FILE` summarizes a recording.");
  cmd->add_option("-i,--interval", a->interval_s, "Seconds between samples")->capture_default_str();
  cmd->add_option("--duration", a->duration_s, "Stop after this many seconds (0: until Ctrl-C)")->capture_default_str();
  cmd->add_flag("--once", a->once, "One sample (over one interval), then exit");
  cmd->add_option("--json", a->json,
                  "Also write the samples as JSON to FILE ('-': instead of the view, on stdout): one line per sample "
                  "(JSON Lines); with --once one indented document")
      ->type_name("FILE|-");
  cmd->add_flag("--dmon", a->dmon,
                "nvidia-smi dmon's view: one line per GPU per sample (sm = GPU util, mem = memory-bandwidth util, fb "
                "= memory used in GiB, clocks, PCIe/NVLink GB/s), red flags as # lines");
  cmd->add_option("--csv", a->csv, "Also write the dmon columns as CSV to FILE ('-': instead of the view, on stdout)")
      ->type_name("FILE|-");
  cmd->add_option("--record", a->record,
                  "Append every sample to FILE (one JSON line each; a kill loses at most the sample being written)");
  cmd->add_option("--sync-every", a->sync_every_s, "fdatasync the recording every S seconds (power-loss bound)")
      ->capture_default_str();
  cmd->add_option("--prometheus", a->prometheus, "Serve /metrics on [ADDR:]PORT (127.0.0.1 unless ADDR is given)");
  cmd->add_option("--thresholds", a->thresholds, "TOML file overriding the thresholds (as for analyze)");
  cmd->add_option("--root", a->root, "Read /proc and /sys under DIR (tests, containers)");
  cmd->add_option("--nvml-library", a->nvml_library, "libnvidia-ml.so.1 to use (default: the driver's)");
  cmd->add_flag("--no-gpu", a->no_gpu, "Host metrics only");
  addQuiet(cmd, &a->quiet);  // the view is left out: needs --record, --prometheus or --json
  auto* rep = cmd->add_subcommand(
      "report", "Summarize a recording: time below / above each threshold, the bottleneck over time, per GPU");
  rep->add_option("file", a->report_file, "Recording written by --record")->required();
  addJsonOption(rep, &a->report_json, "the summary");
  rep->add_option("--thresholds", a->thresholds, "TOML file overriding the thresholds");
  return [a, cmd, rep] {
    if (!cmd->parsed()) return -1;
    Thresholds t = Thresholds::defaults();
    if (!a->thresholds.empty()) {
      auto text = readWholeFile(a->thresholds);
      if (!text.ok()) return fail(text.error().message);
      if (Status st = t.loadTomlText(text.value(), a->thresholds); !st.ok()) return fail(st.message());
    }
    return rep->parsed() ? runReport(*a, t) : runMonitor(*a, t);
  };
}

}  // namespace gpudoctor::cli
