// `gpudoctor monitor`'s settings as parsed, shared by its option table (monitor_cmd.cc) and its
// sampling loop (monitor_run.cc).
#pragma once
#include <string>

#include "diagnosis/thresholds.h"

namespace gpudoctor::cli {

struct MonitorArgs {
  double interval_s = 1, duration_s = 0, sync_every_s = 10;
  bool once = false, no_gpu = false, quiet = false;
  std::string json;   // --json FILE|-
  std::string csv;    // --csv FILE|-
  bool dmon = false;  // nvidia-smi dmon's rows instead of the full screen
  std::string record, prometheus, thresholds, root, nvml_library;
  std::string report_file;
  std::string report_json;
};

// The live monitor: samples every --interval until Ctrl-C, --duration or --once, into the view (full
// or --dmon), --json, --csv, --record and the Prometheus endpoint. Returns the exit code.
int runMonitor(const MonitorArgs& a, const Thresholds& t);

}  // namespace gpudoctor::cli
